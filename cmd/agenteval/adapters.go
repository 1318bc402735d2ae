package main

// The CLI offers every provider and store backend; each registers itself
// when imported, so a Go program using the library compiles in only the
// ones it imports.
import (
	_ "github.com/agenteval/agenteval/provider/anthropic" // registers "anthropic"
	_ "github.com/agenteval/agenteval/provider/gemini"    // registers "gemini"
	_ "github.com/agenteval/agenteval/provider/openai"    // registers "openai" and "ollama"
	_ "github.com/agenteval/agenteval/store/postgres"     // postgres:// stores
	_ "github.com/agenteval/agenteval/store/sqlite"       // SQLite stores
)
