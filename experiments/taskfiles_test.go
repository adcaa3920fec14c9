package experiments

import (
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/datasets"
)

// Of a task's two bad files the error names the same one every time: the
// training file (the files were checked in a map's order before, which
// named either from call to call).
func TestTaskFileErrorsNameTheSameFileEveryCall(t *testing.T) {
	task := Task{Name: "HATE", Labels: []string{"no", "yes"}, Train: &datasets.FileSpec{}, Dev: &datasets.FileSpec{}}
	for range 50 {
		_, err := task.declaration("tasks[0]")
		if err == nil || !strings.Contains(err.Error(), "tasks[0].train.path: required") {
			t.Fatalf("error %v, want the training file's every call", err)
		}
	}
}
