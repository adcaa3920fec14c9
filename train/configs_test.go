package train

import (
	"strings"
	"testing"
)

// Either spelling of a configuration, any case, names its one registry
// entry, and the entry says what it trains on and from.
func TestLookupConfiguration(t *testing.T) {
	tests := []struct {
		name, want            string
		fromIID, iid, su, use bool
	}{
		{"iid", ConfigIID, false, true, false, true},
		{"IID", ConfigIID, false, true, false, true},
		{"IID-T", ConfigIIDThenT, true, false, true, true},
		{"iid-t", ConfigIIDThenT, true, false, true, true},
		{"iid+t", ConfigIIDPlusT, false, true, true, true},
		{"IID-IID+T", ConfigIIDThenIT, true, true, true, true},
		{"iid-(iid+t)", ConfigIIDThenIT, true, true, true, true},
		{"T", ConfigT, false, false, true, false},
		{"0-shot", ConfigPrompt, false, false, false, false},
		{"k-shot iid", ConfigPromptIID, false, false, false, true},
		{"prompt-t", ConfigPromptT, false, false, false, false},
	}
	for _, tc := range tests {
		c, err := LookupConfiguration(tc.name)
		if err != nil || c.Name != tc.want || c.FromIID != tc.fromIID || c.IID != tc.iid || c.Suite != tc.su || c.UsesIID() != tc.use {
			t.Errorf("LookupConfiguration(%q) = %+v, %v; want %s from_iid=%v iid=%v suite=%v uses_iid=%v", tc.name, c, err, tc.want, tc.fromIID, tc.iid, tc.su, tc.use)
		}
		if got, err := ParseConfiguration(tc.name); err != nil || got != tc.want {
			t.Errorf("ParseConfiguration(%q) = %q, %v; want %q", tc.name, got, err, tc.want)
		}
	}
	for _, bad := range []string{"iid+tt", "iid-t+t"} {
		if _, err := LookupConfiguration(bad); err == nil || !strings.Contains(err.Error(), strings.Join(ConfigurationNames(), ", ")) {
			t.Errorf("LookupConfiguration(%q) = %v; want an error listing the registry's names", bad, err)
		}
	}
}
