package flow

import (
	"fmt"
	"strings"
)

// directiveSynonyms map what authors write from other tools (Playwright,
// Cypress, Maestro, Selenium) to the directive that does it, folded as
// foldKey folds: lower case, without "-" and "_".
var directiveSynonyms = map[string]Kind{
	"click": KindTap, "dblclick": KindTap, "doubleclick": KindTap, "tapon": KindTap,
	"fill": KindType, "input": KindType, "inputtext": KindType, "entertext": KindType, "typetext": KindType, "sendkeys": KindType,
	"goto": KindLaunch, "open": KindLaunch, "navigate": KindLaunch, "visit": KindLaunch, "launchapp": KindLaunch, "openlink": KindLaunch,
	"screenshot": KindSnapshot, "takescreenshot": KindSnapshot, "matchsnapshot": KindSnapshot, "tohavescreenshot": KindSnapshot,
	"expect": KindAssert, "verify": KindAssert, "check": KindAssert, "assertvisible": KindAssert, "should": KindAssert,
	"sleep": KindWait, "pause": KindWait, "delay": KindWait,
	"key": KindPress, "keyboard": KindPress, "keypress": KindPress, "presskey": KindPress, "hotkey": KindPress,
	"waitfor": KindAwait, "waituntil": KindAwait, "extendedwaituntil": KindAwait,
	"scroll": KindScrollTo, "scrollintoview": KindScrollTo, "scrolluntilvisible": KindScrollTo,
	"hold": KindLongPress,
	"if":   KindWhen, "unless": KindWhen,
	"log": KindEcho, "print": KindEcho, "comment": KindEcho,
	"runflow": KindRun, "include": KindRun, "import": KindRun,
}

// unknownDirective is the message of a step key that names no directive:
// the directive it most plausibly means (a synonym from another tool,
// the same word spelt another way, or a typo within a third of the
// directive's length), then every directive.
func unknownDirective(name string) string {
	names := make([]string, len(allKinds))
	for i, k := range allKinds {
		names[i] = string(k)
	}
	hint := suggest(name, names)
	folded := foldKey(name)
	if k, ok := directiveSynonyms[folded]; ok {
		hint = fmt.Sprintf(" (did you mean %q?)", k)
	}
	for _, k := range allKinds {
		if foldKey(string(k)) == folded {
			// longPress, scroll_to: the right word, spelt another way.
			hint = fmt.Sprintf(" (did you mean %q?)", k)
		}
	}
	return fmt.Sprintf("unknown directive %q%s; the directives are %s", name, hint, strings.Join(names, ", "))
}
