package train

import (
	"encoding/json"
	"reflect"
	"testing"
)

// TestMethodSettings checks that a run's method settings reach the updater
// its method trains with, and that unset ones keep BeLUGA's constants.
func TestMethodSettings(t *testing.T) {
	hp := Hyper{Epochs: 1, BatchSize: 8, LR: 2e-5}
	tests := []struct {
		method   string
		settings MethodSettings
		want     func(Phase) float64
		value    float64
	}{
		{"irm", MethodSettings{}, func(p Phase) float64 { return p.Update.(*IRM).Lambda }, BeLUGA.Methods.IRMLambda},
		{"irm", MethodSettings{IRMLambda: 10}, func(p Phase) float64 { return p.Update.(*IRM).Lambda }, 10},
		{"irm", MethodSettings{IRMLambda: 100}, func(p Phase) float64 { return p.Update.(*IRM).Lambda }, 100},
		{"dro", MethodSettings{DROEta: 0.5}, func(p Phase) float64 { return p.Update.(*GroupDRO).Eta }, 0.5},
		{"dro-domainbed", MethodSettings{DROEta: 0.5}, func(p Phase) float64 { return p.Update.(*GroupDRO).Eta }, 0.5},
		{"fish", MethodSettings{FishMetaSteps: 3}, func(p Phase) float64 { return float64(p.Update.(*Fish).MetaSteps) }, 3},
		{"l2", MethodSettings{L2Weight: 0.01}, func(p Phase) float64 { return p.WeightDecay }, 0.01},
		{"l2", MethodSettings{}, func(p Phase) float64 { return p.WeightDecay }, BeLUGA.Methods.L2Weight},
		{"dropout", MethodSettings{}, func(p Phase) float64 { return p.Dropout }, 0.3},
		{"dropout", MethodSettings{Dropout: 0.1}, func(p Phase) float64 { return p.Dropout }, 0.1},
		// DomainBed's constants, its hparams_registry's defaults.
		{"irm-domainbed", MethodSettings{}, func(p Phase) float64 { return p.Update.(*IRM).Lambda }, 100},
		{"irm-domainbed", MethodSettings{}, func(p Phase) float64 { return float64(p.Update.(*IRM).AnnealSteps) }, 500},
		{"irm-domainbed", MethodSettings{IRMDomainBedLambda: 10}, func(p Phase) float64 { return p.Update.(*IRM).Lambda }, 10},
		{"irm-domainbed", MethodSettings{IRMDomainBedAnnealSteps: 7}, func(p Phase) float64 { return float64(p.Update.(*IRM).AnnealSteps) }, 7},
		{"irm-domainbed", MethodSettings{IRMLambda: 10}, func(p Phase) float64 { return p.Update.(*IRM).Lambda }, 100},
	}
	for _, tc := range tests {
		spec := RunSpec{Method: tc.method, Settings: tc.settings}
		m, err := NewMethod(tc.method, spec.defaults())
		if err != nil {
			t.Fatal(err)
		}
		if got := tc.want(m.Phases(hp, hp)[0]); got != tc.value {
			t.Errorf("%s with %+v: trains with %v, want %v", tc.method, tc.settings, got, tc.value)
		}
	}
}

// TestMethodSettingsRecorded checks that a run without settings records the
// spec it recorded before they existed, and that every setting names the
// methods that read it.
func TestMethodSettingsRecorded(t *testing.T) {
	b, err := json.Marshal(RunSpec{Method: "irm"})
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["method_settings"]; ok {
		t.Errorf("a run without settings records method_settings: %s", b)
	}
	// Every setting set, each to 1: the JSON names them all.
	var all MethodSettings
	for i := range settingNames {
		f := reflect.ValueOf(&all).Elem().Field(i)
		if f.CanFloat() {
			f.SetFloat(1)
		} else {
			f.SetInt(1)
		}
	}
	b, _ = json.Marshal(all)
	m = nil
	_ = json.Unmarshal(b, &m)
	for k := range m {
		if len(SettingMethods[k]) == 0 {
			t.Errorf("setting %s names no method", k)
		}
		for _, name := range SettingMethods[k] {
			if _, ok := LookupMethod(name); !ok {
				t.Errorf("setting %s names unknown method %s", k, name)
			}
		}
	}
	if len(m) != len(SettingMethods) {
		t.Errorf("%d settings, %d in SettingMethods", len(m), len(SettingMethods))
	}
}
