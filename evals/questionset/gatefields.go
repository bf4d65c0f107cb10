package questionset

import "fmt"

// GateFields lists a gate's file fields in their written order
// ("min_accuracy", "max_ece", …), for editors that show one row each.
func GateFields() []string {
	out := make([]string, len(gateFields))
	for i, f := range gateFields {
		out[i] = f.name
	}
	return out
}

// Field returns the gate's value for file field name (nil when unset) and
// whether the gate has such a field.
func (g *Gate) Field(name string) (*float64, bool) {
	for _, f := range gateFields {
		if f.name == name {
			return *f.get(g), true
		}
	}
	return nil, false
}

// SetField sets file field name to v (nil unsets it); false when the gate
// has no such field. The value is checked as the file's is: not negative,
// and at most 1 (2 for max_brier) where the field is bounded.
func (g *Gate) SetField(name string, v *float64) (bool, error) {
	for _, f := range gateFields {
		if f.name != name {
			continue
		}
		if v != nil && (*v < 0 || (f.max > 0 && *v > f.max)) {
			if f.max > 0 {
				return true, fmtRangeErr(name, *v, f.max)
			}
			return true, fmtRangeErr(name, *v, 0)
		}
		*f.get(g) = clonePtr(v)
		return true, nil
	}
	return false, nil
}

// Empty reports whether no field of the gate is set.
func (g *Gate) Empty() bool {
	for _, f := range gateFields {
		if *f.get(g) != nil {
			return false
		}
	}
	return true
}

func fmtRangeErr(name string, v, hi float64) error {
	if hi > 0 {
		return fmt.Errorf("gate %s: %s is outside [0, %s]", name, formatFloat(v), formatFloat(hi))
	}
	return fmt.Errorf("gate %s: %s is negative", name, formatFloat(v))
}
