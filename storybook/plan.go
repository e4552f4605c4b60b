package storybook

import "time"

// Planner makes the runs of a Storybook's stories.
type Planner struct {
	// Base is the Storybook's root URL, ending in /.
	Base string
	// Devices are the run's devices (--device), each story on each unless
	// its parameters.toolserver.devices says otherwise.
	Devices []string
	// Timeout is how long a story may take to render.
	Timeout time.Duration
	// Device tells a device id the run cannot use.
	Device func(id string) error
}

// Planned is one story's flow on one device, or why the story cannot run.
type Planned struct {
	ID, Device string
	// Flow is the story's generated flow (Flow); nil with Err.
	Flow []byte
	// Err is the story's invalid parameters.toolserver: the story is
	// planned once, on its first device, to be reported as not run.
	Err error
}

// Plan is the runs of the stories, in their order: each story's
// parameters.toolserver read from what the preview extracted, its flow
// on each of its devices. A story whose parameters skip it is left out,
// and skip is told its id.
func (p Planner) Plan(stories []Story, extracted map[string]Extracted, skip func(id string)) []Planned {
	var out []Planned
	for _, s := range stories {
		params, err := ParamsOf(s.ID, extracted, p.Device)
		devices := p.Devices
		if err == nil && params.Skip {
			skip(s.ID)
			continue
		}
		if err == nil && len(params.Devices) > 0 {
			devices = params.Devices
		}
		var data []byte
		if err == nil {
			data, err = Flow(StoryURL(p.Base, s.ID), s.ID, params, p.Timeout)
		}
		if err != nil {
			devices = devices[:1]
		}
		for _, d := range devices {
			out = append(out, Planned{ID: s.ID, Device: d, Flow: data, Err: err})
		}
	}
	return out
}
