package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"go.yaml.in/yaml/v3"

	"github.com/toolserver/toolserver/internal/printable"
)

// The formats -o/--output selects; "" is a command's own form for people.
const (
	formatJSON = "json"
	formatYAML = "yaml"
)

// outputFlags are -o/--output json|yaml and its synonym --json, on every
// command that prints data.
type outputFlags struct {
	format string
	json   bool
}

// register adds the flags to fs and their value completion to cmd.
func (o *outputFlags) register(cmd *cobra.Command, fs *pflag.FlagSet) {
	fs.VarP(formatValue{&o.format}, "output", "o", "print the data as json or yaml")
	fs.BoolVar(&o.json, "json", false, "same as -o json")
	completeFormats(cmd, "output")
}

// resolve returns the format asked for: "", json or yaml.
func (o outputFlags) resolve() (string, error) {
	if o.json {
		if o.format == formatYAML {
			return "", usageError("--json and -o yaml ask for two formats; give one")
		}
		return formatJSON, nil
	}
	return o.format, nil
}

// resolveOr is resolve with def when no format was asked for: commands
// whose only output is data (call, tools describe) print JSON by default.
func (o outputFlags) resolveOr(def string) (string, error) {
	f, err := o.resolve()
	if f == "" && err == nil {
		f = def
	}
	return f, err
}

// formatValue is the value of -o/--output: json or yaml, nothing else.
type formatValue struct{ to *string }

func (v formatValue) String() string { return *v.to }

func (v formatValue) Set(s string) error {
	if s != formatJSON && s != formatYAML {
		return fmt.Errorf("want json or yaml, got %q", s)
	}
	*v.to = s
	return nil
}

func (v formatValue) Type() string { return "json|yaml" }

// completeFormats completes the value of a format flag of cmd.
func completeFormats(cmd *cobra.Command, name string) {
	_ = cmd.RegisterFlagCompletionFunc(name, cobra.FixedCompletions([]string{formatJSON, formatYAML}, cobra.ShellCompDirectiveNoFileComp))
}

// printData prints v in format: indented JSON, or YAML with the same
// field names and order.
func printData(w io.Writer, format string, v any) error {
	if format == formatYAML {
		return printYAML(w, v)
	}
	return printJSON(w, v)
}

func printJSON(w io.Writer, v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := w.Write(escapeJSONControls(b.Bytes()))
	return err
}

// printYAML prints v as YAML. It goes through v's JSON, which YAML reads
// as it is, so the YAML has the JSON's field names (the json tags) and
// order, and no type needs YAML tags of its own.
func printYAML(w io.Writer, v any) error {
	var js bytes.Buffer
	enc := json.NewEncoder(&js)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(escapeJSONControls(js.Bytes()), &doc); err != nil {
		return fmt.Errorf("yaml: %w", err)
	}
	blockStyle(&doc)
	ye := yaml.NewEncoder(w)
	ye.SetIndent(2)
	if err := ye.Encode(&doc); err != nil {
		return err
	}
	return ye.Close()
}

// blockStyle turns the flow style and quotes that JSON text parses into
// YAML's block style; the encoder quotes again only the strings that
// would otherwise read as another type, and a multi-line string becomes
// a literal block.
func blockStyle(n *yaml.Node) {
	n.Style = 0
	if n.Kind == yaml.ScalarNode && n.Tag == "!!str" && strings.Contains(n.Value, "\n") {
		n.Style = yaml.LiteralStyle
	}
	for _, c := range n.Content {
		blockStyle(c)
	}
}

// escapeJSONControls writes the control characters encoding/json leaves
// raw, DEL and the C1 controls (U+0080 to U+009F), as \u escapes: a
// terminal may act on them, and YAML refuses to read them raw. Outside a
// string JSON text is ASCII without DEL, and in UTF-8 the byte 0xC2 only
// ever leads a character, so the bytes are replaced where they stand.
func escapeJSONControls(b []byte) []byte {
	var out []byte
	from := 0 // b[from:] is not copied to out yet
	for i := 0; i < len(b); i++ {
		n := 0 // the bytes of a control character at i
		switch {
		case b[i] == 0x7f:
			n = 1
		case b[i] == 0xc2 && i+1 < len(b) && b[i+1] >= 0x80 && b[i+1] <= 0x9f:
			n = 2
		}
		if n == 0 {
			continue
		}
		out = append(out, b[from:i]...)
		out = fmt.Appendf(out, `\u%04x`, b[i+n-1])
		i += n - 1
		from = i + 1
	}
	if out == nil {
		return b
	}
	return append(out, b[from:]...)
}

// printableLines escapes s line by line: a message of several lines
// keeps its lines, and no other control character reaches the terminal.
func printableLines(s string) string {
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = printable.String(l)
	}
	return strings.Join(lines, "\n")
}

// plural is one or many as n asks.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
