// Package words spells counts in messages: "1 test", "3 replies". It
// imports only the standard library.
package words

import (
	"fmt"
	"strings"
)

// Plural is one when n is 1, else many.
func Plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// Counted is n with its noun: 1 error, 2 errors, 1 reply, 3 replies.
func Counted(n int, one string) string {
	many := one + "s"
	if strings.HasSuffix(one, "y") && !strings.HasSuffix(one, "ay") {
		many = strings.TrimSuffix(one, "y") + "ies"
	}
	return fmt.Sprintf("%d %s", n, Plural(n, one, many))
}
