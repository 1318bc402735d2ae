package trace

import "errors"

func stub(in *input) (convReader, error) { return nil, errors.New("not yet") }

var openLangChain, openInspect, openATIF, openClaude, openCodex, openCopilot = stub, stub, stub, stub, stub, stub
