package main

import (
	"errors"

	flowrun "github.com/toolserver/toolserver/flow/run"
)

// updateFlag is --update-baselines[=all|changed|missing]. A bare flag is
// all, its meaning when it was a boolean; true and false, which the
// boolean took, still mean all and none.
type updateFlag struct{ u *flowrun.Update }

func (f updateFlag) String() string {
	if f.u == nil {
		return ""
	}
	return string(*f.u)
}

func (f updateFlag) Set(v string) error {
	switch v {
	case "true":
		*f.u = flowrun.UpdateAll
		return nil
	case "false":
		*f.u = flowrun.UpdateNone
		return nil
	case "":
		// --update-baselines= names no mode: a slip, not "compare".
		return errors.New("want all, changed or missing")
	}
	u, err := flowrun.ParseUpdate(v)
	if err != nil {
		return err
	}
	*f.u = u
	return nil
}

func (f updateFlag) Type() string { return "MODE" }
