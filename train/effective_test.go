package train

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/beluga-nlp/beluga/losses"
)

// effectiveJSON is the effective form of s, encoded.
func effectiveJSON(t *testing.T, s RunSpec) string {
	t.Helper()
	b, err := json.Marshal(s.Effective())
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// TestEffectiveDropsUnreadSettings: a setting a run does not read leaves
// its effective spec (hence its identity) unchanged; one it reads changes
// it.
func TestEffectiveDropsUnreadSettings(t *testing.T) {
	ceTask := func(s *RunSpec) {
		def := Task{Name: "dup", Labels: []string{"no", "yes"}, MFTLoss: "ce", Metrics: []string{"accuracy"}}
		s.Task, s.TaskDef, s.IIDTrain, s.IIDDev = "dup", &def, "", ""
	}
	tests := []struct {
		name   string
		config string
		method string
		setup  func(*RunSpec) // the task, before the change (nil: sentiment)
		change func(*RunSpec)
		reads  bool
	}{
		{"IID ignores hyper.lr", ConfigIID, "vanilla", nil, func(s *RunSpec) { s.Hyper.LR = 5e-5 }, false},
		{"IID ignores probe_hyper", ConfigIID, "vanilla", nil, func(s *RunSpec) { s.ProbeHyper.LR = 5e-4 }, false},
		{"IID ignores method settings", ConfigIID, "vanilla", nil, func(s *RunSpec) { s.Settings.IRMLambda = 10 }, false},
		{"IID ignores the suite cap", ConfigIID, "vanilla", nil, func(s *RunSpec) { s.SuiteLimit = 3 }, false},
		{"IID ignores loss.mft", ConfigIID, "vanilla", nil, func(s *RunSpec) { s.IIDHyper.Loss.MFT = losses.SigmoidBCE }, false},
		{"IID reads iid_hyper.lr", ConfigIID, "vanilla", nil, func(s *RunSpec) { s.IIDHyper.LR = 5e-5 }, true},
		{"IID+T ignores iid_hyper", ConfigIIDPlusT, "vanilla", nil, func(s *RunSpec) { s.IIDHyper.LR = 5e-5 }, false},
		{"IID+T reads hyper.lr", ConfigIIDPlusT, "vanilla", nil, func(s *RunSpec) { s.Hyper.LR = 5e-5 }, true},
		{"vanilla ignores probe_hyper.lr", ConfigIIDPlusT, "vanilla", nil, func(s *RunSpec) { s.ProbeHyper.LR = 5e-4 }, false},
		{"LP-FT reads probe_hyper.lr", ConfigIIDPlusT, "lp-ft", nil, func(s *RunSpec) { s.ProbeHyper.LR = 5e-4 }, true},
		{"LP-FT ignores probe_hyper.epochs", ConfigIIDPlusT, "lp-ft", nil, func(s *RunSpec) { s.ProbeHyper.Epochs = 3 }, false},
		{"LP-FT ignores hyper.epochs", ConfigIIDPlusT, "lp-ft", nil, func(s *RunSpec) { s.Hyper.Epochs = 3 }, false},
		{"vanilla ignores irm_lambda", ConfigIIDPlusT, "vanilla", nil, func(s *RunSpec) { s.Settings.IRMLambda = 10 }, false},
		{"IRM reads irm_lambda", ConfigIIDPlusT, "irm", nil, func(s *RunSpec) { s.Settings.IRMLambda = 10 }, true},
		{"vanilla ignores the Fish correction", ConfigIIDPlusT, "vanilla", nil, func(s *RunSpec) { s.Corrections = []string{CorrectFishOuterStep} }, false},
		{"Fish reads its correction", ConfigIIDPlusT, "fish", nil, func(s *RunSpec) { s.Corrections = []string{CorrectFishOuterStep} }, true},
		{"a bce task reads loss.mft", ConfigIIDPlusT, "vanilla", nil, func(s *RunSpec) { s.Hyper.Loss.MFT = losses.SoftmaxCE }, true},
		{"a ce task ignores loss.mft", ConfigIIDPlusT, "vanilla", ceTask, func(s *RunSpec) { s.Hyper.Loss.MFT = losses.SoftmaxCE }, false},
		{"T ignores train_size", ConfigT, "vanilla", nil, func(s *RunSpec) { s.TrainSize = 3 }, false},
		{"IID reads train_size", ConfigIID, "vanilla", nil, func(s *RunSpec) { s.TrainSize = 3 }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := tinySpec(tc.config)
			s.Method = tc.method
			if tc.setup != nil {
				tc.setup(&s)
			}
			changed := s
			changed.Corrections = append([]string(nil), s.Corrections...)
			tc.change(&changed)
			if got := effectiveJSON(t, s) != effectiveJSON(t, changed); got != tc.reads {
				t.Errorf("effective spec changed: %v, want %v\nbefore %s\nafter  %s", got, tc.reads, effectiveJSON(t, s), effectiveJSON(t, changed))
			}
		})
	}
}

// TestEffectiveSaysWhatRuns: the effective spec writes what the run fixes
// — LP-FT's 1.5 epochs per phase, a ce task's softmax cross-entropy — and
// is what Validate and the trainer read.
func TestEffectiveSaysWhatRuns(t *testing.T) {
	s := tinySpec(ConfigIIDPlusT)
	s.Method = "lp-ft"
	s.ProbeHyper.Epochs = 7
	e := s.Effective()
	if e.ProbeHyper.Epochs != LPFTEpochs || e.Hyper.Epochs != LPFTEpochs {
		t.Errorf("LP-FT's effective epochs %v and %v, want %v each", e.ProbeHyper.Epochs, e.Hyper.Epochs, LPFTEpochs)
	}
	s = tinySpec(ConfigIIDPlusT)
	s.Task = "qqp"
	if got := s.Effective().Hyper.Loss.MFT; got != losses.SoftmaxCE {
		t.Errorf("qqp's effective loss.mft %v, want softmax CE", got)
	}
	if e := s.Effective(); effectiveJSON(t, e) != effectiveJSON(t, s) {
		t.Errorf("Effective is not idempotent")
	}
}

// TestValidateOneRulePerSetting: a value is refused by one rule whatever
// set it, and a setting a run does not read is not checked for it.
func TestValidateOneRulePerSetting(t *testing.T) {
	s := tinySpec(ConfigIIDPlusT)
	s.Hyper.LR = 0
	err := s.Validate()
	if err == nil || !strings.Contains(err.Error(), "hyper: lr 0: want a positive number") {
		t.Errorf("hyper.lr 0: %v, want hyper: lr 0: want a positive number", err)
	}
	s = tinySpec(ConfigIID)
	s.Hyper = Hyper{}
	if err := s.Validate(); err != nil {
		t.Errorf("the IID baseline reads no suite-phase hyper-parameters: %v", err)
	}
}
