// Package tool owns the tool registry: each tool's name, description, JSON
// Schema of its arguments, declared file inputs and handler; argument
// validation against the schema; the coded error type whose kind maps to an
// HTTP status in one table; and the unwrapping of the file-input objects a
// client sends (__argentFileInput) into files the handler can read.
package tool
