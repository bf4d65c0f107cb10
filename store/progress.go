package store

// MigrationProgress is what a long migration step reports while it runs,
// so a command opening a large database can say why it waits.
type MigrationProgress struct {
	// Migration is the migration's version (its file name without .sql).
	Migration string
	// Step says what it does, e.g. "storing question bodies once".
	Step string
	// Done of Total rows are processed.
	Done, Total int64
	// Finished is set on the step's last report.
	Finished bool
}

// OpenOptions tune OpenWith.
type OpenOptions struct {
	// Progress, if set, is called from the opening goroutine while a
	// migration rewrites stored rows: at the step's start, about every
	// percent, and when it finishes. Nothing is reported when the schema
	// is up to date or the tables are empty.
	Progress func(MigrationProgress)
}

// progress passes one migration step's progress to OpenOptions.Progress,
// about once a percent. A nil *progress reports nothing.
type progress struct {
	fn        func(MigrationProgress)
	migration string
	cur       MigrationProgress
	next      int64
}

func (p *progress) start(step string, total int64) {
	if p == nil || p.fn == nil {
		return
	}
	p.cur = MigrationProgress{Migration: p.migration, Step: step, Total: total}
	p.next = 0
	if total > 0 {
		p.fn(p.cur)
	}
}

func (p *progress) update(done int64) {
	if p == nil || p.fn == nil || p.cur.Total == 0 {
		return
	}
	p.cur.Done = done
	if done >= p.next {
		p.fn(p.cur)
		p.next = done + max(1, p.cur.Total/100)
	}
}

func (p *progress) finish() {
	if p == nil || p.fn == nil || p.cur.Total == 0 {
		return
	}
	p.cur.Done, p.cur.Finished = p.cur.Total, true
	p.fn(p.cur)
}
