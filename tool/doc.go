// Package tool owns the tool registry: each tool's name, description, JSON
// Schema of its arguments, declared file inputs and handler; argument
// validation against the schema; the device leases of its calls; and the
// unwrapping of the file-input objects a client sends (wire.FileInputObject)
// into files the handler can read. Its errors are fault.Error values; the
// server answers each with the status of its kind (server/status.go).
package tool
