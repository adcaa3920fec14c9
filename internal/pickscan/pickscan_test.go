package pickscan

import (
	"strings"
	"testing"
)

func TestScan(t *testing.T) {
	tests := []struct {
		name string
		data string
		want string // "" = accepted
	}{
		{"protocol 2 dict", "\x80\x02}q\x00X\x01\x00\x00\x00aK\x01s.", ""},
		{"short string", "\x80\x02X\x05\x00\x00\x00ab.", "truncated pickle"},
		{"huge length", "\x80\x02\x8d\xff\xff\xff\xff\xff\xff\xff\x7fab.", "truncated pickle"},
		{"frame longer than data", "\x80\x04\x95\x00\x00\x00\x00\x01\x00\x00\x00.", "truncated pickle"},
		{"no stop", "\x80\x02}", "no STOP"},
		{"unknown opcode", "\x80\x02\xff.", "unknown opcode 0xff"},
		{"line without newline", "\x80\x02I12", "lacks its newline"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Scan([]byte(tc.data))
			if tc.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want it to contain %q", err, tc.want)
			}
		})
	}
}
