package tool

// Notes and wrappers: how the house wires a concern around a tool (the
// control plane records every flow-execute call as a run) without the
// tool knowing of it. The tool says what it knows as progress values
// (its step reports, and Notes such as DeviceHeld), and a wrapper
// installed with Registry.Wrap hears them through Call.Observe.

// Note is a progress value for the call's observers only (Call.Observe):
// the transport never sends it to the client.
type Note interface{ note() }

// FlowNamed is the note flow-execute gives once it has read its flow's
// name.
type FlowNamed struct{ Name string }

// DeviceHeld is the note a tool gives once it holds the device it runs
// on.
type DeviceHeld struct{ Device string }

// SentMembers is the Values key a tool's Prepare hook sets (to true)
// when the call's flow file input carried members: a linked client's
// call, which the run of the call records as linked.
const SentMembers = "sentMembers"

func (FlowNamed) note()  {}
func (DeviceHeld) note() {}

// Observe has fn hear every progress value of the call, Notes included,
// after the transport has had its own: a wrapper records what the tool
// reports.
func (c *Call) Observe(fn func(v any)) { c.observers = append(c.observers, fn) }

// Wrap replaces the handler of the tool name with wrap of it, once, as
// the house is wired (before any call): false when the registry has no
// such tool.
func (r *Registry) Wrap(name string, wrap func(Handler) Handler) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.tools[name]
	if !ok {
		return false
	}
	wrapped := *t
	wrapped.Run = wrap(t.Run)
	r.tools[name] = &wrapped
	return true
}
