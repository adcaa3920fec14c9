package experiments

import (
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/beluga-nlp/beluga/train"
)

// A grid key may name any setting of package train's run spec by its field
// path, the JSON names joined by dots as train_spec.json spells them:
// max_length, suite_limit, hyper.lr, iid_hyper.batch_size,
// method_settings.irm_lambda, hyper.loss.detach_inv. A short key (lr) is
// its field path's other name (gridKeys): one setting, one run. Every value
// of a field is its own row in the reports (an axis, IsAxis), but for the
// phases' epochs, batch sizes and learning rates, BeLUGA's search keys,
// which are replicates.
//
// What identifies a run in other ways is no axis: its task, suite, data,
// model, configuration, method, fold and seed have their own spec fields,
// and the runner derives the starting model and the cache.
var notAxes = []string{
	"task", "task_def", "suite", "iid_train", "iid_dev", "iid_train_file", "iid_dev_file",
	"model", "configuration", "method", "from_iid", "held_out", "seed", "corrections",
}

// fieldPathError says why a grid key is no field path of train.RunSpec
// that a sweep can vary, nil when it is one.
func fieldPathError(key string) error {
	_, err := runSpecField(reflect.ValueOf(&train.RunSpec{}).Elem(), key)
	return err
}

// runSpecField finds the field a path names in v (a train.RunSpec).
func runSpecField(v reflect.Value, path string) (reflect.Value, error) {
	parts := strings.Split(path, ".")
	if slices.Contains(notAxes, parts[0]) {
		return reflect.Value{}, fmt.Errorf("%s is not a sweep axis (a spec field of its own sets it)", parts[0])
	}
	for i, name := range parts {
		if v.Kind() == reflect.Pointer && v.Type().Elem().Kind() == reflect.Struct {
			// An optional block (prompt): a key in it sets it.
			if v.IsNil() {
				v.Set(reflect.New(v.Type().Elem()))
			}
			v = v.Elem()
		}
		if v.Kind() != reflect.Struct {
			return reflect.Value{}, fmt.Errorf("%s has no field %s", strings.Join(parts[:i], "."), name)
		}
		f, ok := fieldByJSONName(v, name)
		if !ok {
			return reflect.Value{}, fmt.Errorf("the run spec has no field %s", strings.Join(parts[:i+1], "."))
		}
		v = f
	}
	switch v.Kind() {
	case reflect.Int, reflect.Float64, reflect.Bool, reflect.Uint64, reflect.Int64:
		return v, nil
	case reflect.String:
		if parts[0] == "prompt" { // a template's name
			return v, nil
		}
	}
	return reflect.Value{}, fmt.Errorf("%s is not a number or a boolean", path)
}

// fieldByJSONName returns the exported field of struct v whose JSON name is
// name.
func fieldByJSONName(v reflect.Value, name string) (reflect.Value, bool) {
	t := v.Type()
	for i := range t.NumField() {
		sf := t.Field(i)
		if !sf.IsExported() {
			continue
		}
		tag, _, _ := strings.Cut(sf.Tag.Get("json"), ",")
		if tag == "-" {
			continue
		}
		if tag == name {
			return v.Field(i), true
		}
	}
	return reflect.Value{}, false
}

// checkFieldPath checks a grid value against the field its key names.
func checkFieldPath(key string, value any) error {
	var s train.RunSpec
	return setFieldPath(&s, key, value)
}

// setFieldPath sets the field key names in s to value (a YAML number or
// boolean, or one read back from JSON).
func setFieldPath(s *train.RunSpec, key string, value any) error {
	f, err := runSpecField(reflect.ValueOf(s).Elem(), key)
	if err != nil {
		return err
	}
	switch f.Kind() {
	case reflect.String:
		str, ok := value.(string)
		if !ok {
			return fmt.Errorf("%#v is not a name", value)
		}
		f.SetString(str)
	case reflect.Bool:
		b, ok := value.(bool)
		if !ok {
			return fmt.Errorf("%#v is not true or false", value)
		}
		f.SetBool(b)
	case reflect.Float64:
		x, ok := number(value)
		if !ok {
			return fmt.Errorf("%#v is not a number", value)
		}
		f.SetFloat(x)
	default:
		x, ok := number(value)
		if !ok || x != float64(int64(x)) || x < 0 {
			return fmt.Errorf("%#v is not a whole number of at least 0", value)
		}
		if f.Kind() == reflect.Uint64 {
			f.SetUint(uint64(x))
		} else {
			f.SetInt(int64(x))
		}
	}
	return nil
}

// wholeNumber is a checked whole-number option's value (Check refuses
// others).
func wholeNumber(v any) int {
	x, _ := number(v)
	return int(x)
}

// number is a YAML or JSON number's value.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}
