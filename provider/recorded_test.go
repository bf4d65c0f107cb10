package provider

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/jevlab/jevlab/internal/testutil"
)

// TestRecordedExchangesCheck runs every real recorded exchange under
// ../shared/testdata through Validate and Check unchanged.
func TestRecordedExchangesCheck(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(testutil.SharedDir(t), "testdata", "*", "recorded*.jsonl"))
	if len(files) == 0 {
		t.Skip("../shared/testdata not present")
	}
	total := 0
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		line := 0
		for sc.Scan() {
			line++
			var ex Exchange
			if err := json.Unmarshal(sc.Bytes(), &ex); err != nil {
				t.Fatalf("%s:%d: %v", f, line, err)
			}
			var req Request
			if err := json.Unmarshal(ex.Request, &req); err != nil {
				t.Fatalf("%s:%d: request: %v", f, line, err)
			}
			if err := req.Validate(); err != nil {
				t.Fatalf("%s:%d: %v", f, line, err)
			}
			var resp Response
			if err := json.Unmarshal(ex.Response, &resp); err != nil {
				t.Fatalf("%s:%d: response: %v", f, line, err)
			}
			ans, err := Check(&req, &resp)
			if err != nil {
				t.Fatalf("%s:%d: %v", f, line, err)
			}
			if len(ans) != len(req.Questions) {
				t.Fatalf("%s:%d: %d answers for %d questions", f, line, len(ans), len(req.Questions))
			}
			total++
		}
		fh.Close()
	}
	if total < 500+400+420+30 {
		t.Fatalf("checked only %d exchanges", total)
	}
	t.Logf("checked %d recorded exchanges", total)
}
