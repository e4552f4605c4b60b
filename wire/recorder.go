package wire

// The recorder's tools, by name: the tools that record a flow. A replay
// over a link rejects a tool: step that calls one (pre-validation), a
// recorded step never calls one, and only the result of one may carry a
// recording's savedTo directive ("The x-argent-linked header").
const (
	ToolStartRecording  = "flow-start-recording"
	ToolAddStep         = "flow-add-step"
	ToolAddEcho         = "flow-add-echo"
	ToolAddScript       = "flow-add-script"
	ToolFinishRecording = "flow-finish-recording"
)

// RecorderTool reports whether name is one of the recorder's tools.
func RecorderTool(name string) bool {
	switch name {
	case ToolStartRecording, ToolAddStep, ToolAddEcho, ToolAddScript, ToolFinishRecording:
		return true
	}
	return false
}
