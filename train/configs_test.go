package train

import "testing"

func TestLookupConfiguration(t *testing.T) {
	tests := []struct {
		name, want       string
		fromIID, iid, su bool
	}{
		{"iid", ConfigIID, false, true, false},
		{"IID", ConfigIID, false, true, false},
		{"IID-T", ConfigIIDThenT, true, false, true},
		{"iid+t", ConfigIIDPlusT, false, true, true},
		{"IID-IID+T", ConfigIIDThenIT, true, true, true},
		{"iid-(iid+t)", ConfigIIDThenIT, true, true, true},
		{"T", ConfigT, false, false, true},
	}
	for _, tc := range tests {
		c, err := LookupConfiguration(tc.name)
		if err != nil || c.Name != tc.want || c.FromIID != tc.fromIID || c.IID != tc.iid || c.Suite != tc.su {
			t.Errorf("LookupConfiguration(%q) = %+v, %v; want %s from_iid=%v iid=%v suite=%v", tc.name, c, err, tc.want, tc.fromIID, tc.iid, tc.su)
		}
	}
	if _, err := LookupConfiguration("iid+tt"); err == nil {
		t.Error("an unknown configuration was accepted")
	}
}
