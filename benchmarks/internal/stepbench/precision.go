package stepbench

import (
	"fmt"

	"github.com/beluga-nlp/beluga/models"
)

// SetPrecision makes the step's model compute its products in p ("fp32",
// "bf16"; "" is fp32), as a run with model.precision does.
func (s *Step) SetPrecision(p string) error {
	prec, err := models.ParsePrecision(p)
	if err != nil {
		return fmt.Errorf("-precision: %w", err)
	}
	m, ok := s.m.(interface{ SetPrecision(models.Precision) })
	if !ok {
		return fmt.Errorf("-precision %s: the %T has no precision setting", p, s.m)
	}
	m.SetPrecision(prec)
	return nil
}
