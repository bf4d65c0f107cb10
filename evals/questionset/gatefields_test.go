package questionset

import "testing"

func TestGateFieldsEdit(t *testing.T) {
	names := GateFields()
	if len(names) != 14 || names[0] != "min_accuracy" {
		t.Fatalf("fields %v", names)
	}
	var g Gate
	if !g.Empty() {
		t.Fatal("zero gate not empty")
	}
	v := 0.8
	if ok, err := g.SetField("min_accuracy", &v); !ok || err != nil {
		t.Fatalf("set: %v %v", ok, err)
	}
	if got, _ := g.Field("min_accuracy"); got == nil || *got != 0.8 || g.MinAccuracy == &v {
		t.Fatalf("field %v (must be a copy)", got)
	}
	bad := 1.5
	if _, err := g.SetField("max_ece", &bad); err == nil {
		t.Fatal("max_ece 1.5 accepted")
	}
	if _, err := g.SetField("max_brier", &bad); err != nil {
		t.Fatalf("max_brier 1.5 refused: %v", err)
	}
	neg := -1.0
	if _, err := g.SetField("max_log_loss", &neg); err == nil {
		t.Fatal("negative log loss accepted")
	}
	if ok, _ := g.SetField("nope", &v); ok {
		t.Fatal("unknown field accepted")
	}
	if _, err := g.SetField("min_accuracy", nil); err != nil || g.MinAccuracy != nil {
		t.Fatal("unset failed")
	}
}
