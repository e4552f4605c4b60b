package client

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"github.com/toolserver/toolserver/fault"
)

// The answer of a call as the client reads it (docs/link-protocol.md, "The
// call"): a JSON answer, or an NDJSON stream of progress, waiting, result and
// error lines, each read within a cap.

func isNDJSON(ct string) bool {
	mt, _, err := mime.ParseMediaType(ct)
	return err == nil && strings.EqualFold(mt, "application/x-ndjson")
}

// answerLine is one line of an NDJSON answer.
type answerLine struct {
	Event     string          `json:"event"`
	Data      json.RawMessage `json:"data"`
	Error     string          `json:"error"`
	ErrorCode string          `json:"error_code"`
	ErrorKind string          `json:"error_kind"`
}

// readStream reads the stream of a call: progress and waiting lines go to
// their callbacks as they arrive, the last result line is the result, an
// error line fails the call at once, other events are ignored. The stream
// ending before a result is a ClosedError.
func (st *callState) readStream(r io.Reader) (json.RawMessage, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var result json.RawMessage
	for {
		line, err := readAnswerLine(br)
		if errors.Is(err, errOverCap) {
			return nil, fault.Infrastructure(fmt.Errorf("%s: %w", st.name, err))
		}
		if len(bytes.TrimSpace(line)) > 0 {
			var ev answerLine
			if jerr := json.Unmarshal(line, &ev); jerr != nil {
				if err != nil {
					// The connection broke in the middle of this line.
					return nil, closed(st.name, err)
				}
				return nil, fault.Infrastructure(fmt.Errorf("%s: the tool-server sent a stream line that is not JSON: %w", st.name, jerr))
			}
			switch ev.Event {
			case "progress":
				if st.opts.Progress != nil {
					st.opts.Progress(ev.Data)
				}
			case "waiting":
				var w struct {
					Message string `json:"message"`
				}
				if json.Unmarshal(ev.Data, &w) == nil && w.Message != "" && st.opts.Waiting != nil {
					st.opts.Waiting(w.Message)
				}
			case "result":
				result = ev.Data
				if result == nil {
					result = json.RawMessage("null")
				}
			case "error":
				msg := ev.Error
				if msg == "" {
					msg = "tool invocation failed"
				}
				return nil, (&CallError{Tool: st.name, Status: http.StatusOK, Message: msg, Code: ev.ErrorCode, Kind: ev.ErrorKind}).classified()
			}
		}
		if err != nil {
			if result != nil {
				return result, nil
			}
			if errors.Is(err, io.EOF) {
				err = errors.New("the stream ended without a result")
			}
			return nil, closed(st.name, err)
		}
	}
}

// errOverCap is an answer larger than the client reads.
var errOverCap = errors.New("over the size the client reads")

// readAnswerLine reads one line up to MaxResultBytes.
func readAnswerLine(br *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := br.ReadSlice('\n')
		if len(line)+len(chunk) > MaxResultBytes {
			return nil, fmt.Errorf("a stream line is %w (%d bytes)", errOverCap, MaxResultBytes)
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return line, err
	}
}

// readAnswerCapped reads r up to limit bytes; more is errOverCap.
func readAnswerCapped(r io.Reader, limit int64, what string) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s is %w (%d bytes)", what, errOverCap, limit)
	}
	return b, nil
}
