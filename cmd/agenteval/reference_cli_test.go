package main

import (
	"bytes"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// renderCLI writes docs/reference/cli.md: every command of the real
// command tree, with its usage, help text and flags.
func renderCLI() ([]byte, error) {
	root := newRoot(newEnv(strings.NewReader(""), io.Discard, io.Discard))
	// cobra adds completion when the program runs; so does the page.
	root.InitDefaultCompletionCmd()
	var cmds []*cobra.Command
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" {
			return
		}
		cmds = append(cmds, c)
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(root)

	var b bytes.Buffer
	b.WriteString(generatedNote)
	b.WriteString("# Command-line reference\n\n")
	b.WriteString("Every command of `agenteval`, with its flags, as `agenteval COMMAND --help` shows them. ")
	b.WriteString("The flags of [`agenteval`](#agenteval) itself (the global flags) are taken by every command. ")
	b.WriteString("A flag's default is left out when it is empty, zero or false. ")
	b.WriteString("What the exit status means is in [Exit codes](exit-codes.md); ")
	b.WriteString("the graders that `--metric` and eval files name are in [Graders and metrics](graders.md).\n\n")
	b.WriteString("| Command | What it does |\n|---|---|\n")
	for _, c := range cmds {
		fmt.Fprintf(&b, "| [`%s`](#%s) | %s |\n", c.CommandPath(), mdAnchor(c.CommandPath()), mdEscape(c.Short))
	}
	for _, c := range cmds {
		b.WriteString("\n")
		refWriteCommand(&b, c)
		b.Truncate(len(bytes.TrimRight(b.Bytes(), "\n")))
		b.WriteString("\n")
	}
	return b.Bytes(), nil
}

// refOurs says whether c is one of agenteval's commands, whose help text is
// ours to show, rather than one cobra adds (completion).
func refOurs(c *cobra.Command) bool {
	for p := c; p != nil; p = p.Parent() {
		if p.Name() == "completion" && p.Parent() == c.Root() {
			return false
		}
	}
	return true
}

// refWriteCommand writes one command's section.
func refWriteCommand(b *bytes.Buffer, c *cobra.Command) {
	// agenteval and its commands are sections, subcommands below them.
	level := min(max(2, 1+strings.Count(c.CommandPath(), " ")), 4)
	fmt.Fprintf(b, "%s %s\n\n", strings.Repeat("#", level), c.CommandPath())
	if c.Short != "" {
		fmt.Fprintf(b, "%s.\n\n", strings.TrimSuffix(c.Short, "."))
	}
	// The usage lines --help shows.
	var usage []string
	if c.Runnable() {
		usage = append(usage, c.UseLine())
	}
	if c.HasAvailableSubCommands() {
		usage = append(usage, c.CommandPath()+" [command]")
	}
	fmt.Fprintf(b, "```\n%s\n```\n\n", strings.Join(usage, "\n"))
	if len(c.Aliases) > 0 {
		fmt.Fprintf(b, "Also called: %s.\n\n", strings.Join(refCodeAll(c.Aliases), ", "))
	}
	if long := strings.TrimSpace(c.Long); long != "" && refOurs(c) {
		fmt.Fprintf(b, "```text\n%s\n```\n\n", long)
	}
	if ex := strings.TrimRight(c.Example, "\n "); ex != "" {
		fmt.Fprintf(b, "Examples:\n\n```sh\n%s\n```\n\n", ex)
	}
	var subs []string
	for _, s := range c.Commands() {
		if !s.Hidden && s.Name() != "help" {
			subs = append(subs, fmt.Sprintf("[`%s`](#%s)", s.CommandPath(), mdAnchor(s.CommandPath())))
		}
	}
	if len(subs) > 0 {
		fmt.Fprintf(b, "Subcommands: %s.\n\n", strings.Join(subs, ", "))
	}
	title := "Flags"
	if c == c.Root() {
		title = "Global flags, taken by every command"
	}
	refWriteFlags(b, title, c.LocalFlags())
}

// refCodeAll puts each of ss in a code span.
func refCodeAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = mdCode(s)
	}
	return out
}

// refWriteFlags writes a table of the flags of fs that are not hidden.
func refWriteFlags(b *bytes.Buffer, title string, fs *pflag.FlagSet) {
	var rows []string
	fs.VisitAll(func(f *pflag.Flag) {
		if f.Hidden {
			return
		}
		name := "`--" + f.Name + "`"
		if f.Shorthand != "" {
			name += ", `-" + f.Shorthand + "`"
		}
		_, usage := pflag.UnquoteUsage(f)
		if f.Deprecated != "" {
			usage += " (deprecated: " + f.Deprecated + ")"
		}
		def := ""
		if !refZeroDefault(f) {
			def = mdCode(f.DefValue)
		}
		rows = append(rows, fmt.Sprintf("| %s | %s | %s | %s |", name, refFlagType(f), def, mdEscape(usage)))
	})
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "%s:\n\n| Flag | Type | Default | Meaning |\n|---|---|---|---|\n%s\n", title, strings.Join(rows, "\n"))
}

// refFlagType names a flag's value type for people.
func refFlagType(f *pflag.Flag) string {
	switch t := f.Value.Type(); t {
	case "stringArray":
		return "string, repeatable"
	case "stringSlice":
		return "strings, comma-separated, repeatable"
	case "float64":
		return "number"
	case "bool":
		return "boolean"
	default:
		return t
	}
}

// refZeroDefault says whether a flag's default is its type's zero value,
// which the page leaves out, as --help does.
func refZeroDefault(f *pflag.Flag) bool {
	switch f.DefValue {
	case "", "[]", "false", "0", "0s", "<nil>":
		return true
	}
	return false
}
