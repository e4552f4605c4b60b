package tool

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"

	"github.com/toolserver/toolserver/fault"
)

// Schema is the subset of JSON Schema the tools use for their arguments.
type Schema struct {
	Type                 string             `json:"type,omitempty"`
	Description          string             `json:"description,omitempty"`
	Properties           map[string]*Schema `json:"properties,omitempty"`
	Required             []string           `json:"required,omitempty"`
	AdditionalProperties *bool              `json:"additionalProperties,omitempty"`
	Items                *Schema            `json:"items,omitempty"`
	Enum                 []any              `json:"enum,omitempty"`
	Minimum              *float64           `json:"minimum,omitempty"`
	Maximum              *float64           `json:"maximum,omitempty"`
	MinLength            *int               `json:"minLength,omitempty"`
	MaxLength            *int               `json:"maxLength,omitempty"`
	Pattern              string             `json:"pattern,omitempty"`
	Default              any                `json:"default,omitempty"`
	// AnyType lists alternative types ("string", "object") for arguments a
	// client may send as a plain value or as a file-input object.
	AnyType []string `json:"-"`
}

// MarshalJSON writes AnyType as a JSON Schema type array.
func (s *Schema) MarshalJSON() ([]byte, error) {
	type plain Schema
	if len(s.AnyType) == 0 {
		return json.Marshal((*plain)(s))
	}
	return json.Marshal(struct {
		*plain
		Type []string `json:"type"`
	}{(*plain)(s), s.AnyType})
}

// Object returns an object schema with the properties and the required names.
func Object(props map[string]*Schema, required ...string) *Schema {
	no := false
	return &Schema{Type: "object", Properties: props, Required: required, AdditionalProperties: &no}
}

// String returns a string property schema.
func String(desc string) *Schema { return &Schema{Type: "string", Description: desc} }

// Bool returns a boolean property schema.
func Bool(desc string) *Schema { return &Schema{Type: "boolean", Description: desc} }

// Number returns a number property schema bounded to min..max.
func Number(desc string, min, max float64) *Schema {
	return &Schema{Type: "number", Description: desc, Minimum: &min, Maximum: &max}
}

// Integer returns an integer property schema bounded to min..max.
func Integer(desc string, min, max float64) *Schema {
	return &Schema{Type: "integer", Description: desc, Minimum: &min, Maximum: &max}
}

// Enum returns a string schema restricted to values.
func Enum(desc string, values ...string) *Schema {
	s := &Schema{Type: "string", Description: desc}
	for _, v := range values {
		s.Enum = append(s.Enum, v)
	}
	return s
}

// Validate checks a JSON value against the schema and returns a
// validation *fault.Error naming the first offending field.
func (s *Schema) Validate(raw []byte) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return &fault.Error{Kind: fault.Validation, Message: "arguments are not valid JSON: " + err.Error()}
	}
	if dec.More() {
		return &fault.Error{Kind: fault.Validation, Message: "arguments are not valid JSON: trailing data after the object"}
	}
	return s.check("", v)
}

func typeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case bool:
		return "boolean"
	case json.Number:
		return "number"
	case string:
		return "string"
	case []any:
		return "array"
	case map[string]any:
		return "object"
	}
	return fmt.Sprintf("%T", v)
}

func fieldName(path string) string {
	if path == "" {
		return "arguments"
	}
	return path
}

func (s *Schema) typeOK(t string, v any) bool {
	switch t {
	case "", typeName(v):
		return true
	case "integer":
		n, ok := v.(json.Number)
		if !ok {
			return false
		}
		f, err := n.Float64()
		return err == nil && f == math.Trunc(f)
	}
	return false
}

func (s *Schema) check(path string, v any) error {
	types := s.AnyType
	if len(types) == 0 {
		types = []string{s.Type}
	}
	if !slices.ContainsFunc(types, func(t string) bool { return s.typeOK(t, v) }) {
		return fault.FieldError(fieldName(path), "%s: want %s, got %s", fieldName(path), strings.Join(types, " or "), typeName(v))
	}
	if len(s.Enum) > 0 && !slices.Contains(s.Enum, v) {
		return fault.FieldError(fieldName(path), "%s: want one of %v, got %v", fieldName(path), s.Enum, v)
	}
	switch v := v.(type) {
	case json.Number:
		f, _ := v.Float64()
		if s.Minimum != nil && f < *s.Minimum {
			return fault.FieldError(fieldName(path), "%s: %v is below the minimum %v", fieldName(path), v, *s.Minimum)
		}
		if s.Maximum != nil && f > *s.Maximum {
			return fault.FieldError(fieldName(path), "%s: %v is above the maximum %v", fieldName(path), v, *s.Maximum)
		}
	case string:
		if s.MinLength != nil && len(v) < *s.MinLength {
			return fault.FieldError(fieldName(path), "%s: shorter than %d characters", fieldName(path), *s.MinLength)
		}
		if s.MaxLength != nil && len(v) > *s.MaxLength {
			return fault.FieldError(fieldName(path), "%s: longer than %d characters", fieldName(path), *s.MaxLength)
		}
	case []any:
		if s.Items != nil {
			for i, e := range v {
				if err := s.Items.check(fmt.Sprintf("%s[%d]", fieldName(path), i), e); err != nil {
					return err
				}
			}
		}
	case map[string]any:
		if s.Type != "object" && !slices.Contains(s.AnyType, "object") {
			return nil
		}
		if s.Properties == nil {
			return nil
		}
		for _, r := range s.Required {
			if _, ok := v[r]; !ok {
				return fault.FieldError(join(path, r), "%s: required", join(path, r))
			}
		}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			ps, ok := s.Properties[k]
			if !ok {
				if s.AdditionalProperties != nil && !*s.AdditionalProperties {
					return fault.FieldError(join(path, k), "%s: unknown argument", join(path, k))
				}
				continue
			}
			if err := ps.check(join(path, k), v[k]); err != nil {
				return err
			}
		}
	}
	return nil
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}
