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
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
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
	if err := yaml.Unmarshal(js.Bytes(), &doc); err != nil {
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
