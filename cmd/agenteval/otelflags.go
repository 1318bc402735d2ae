package main

import (
	"context"
	"fmt"
	"io"

	"github.com/agenteval/agenteval"
	"github.com/agenteval/agenteval/otelexport"
	"github.com/agenteval/agenteval/report"
	"github.com/agenteval/agenteval/results"
	"github.com/spf13/pflag"
)

// otelFlags export results as OpenTelemetry traces.
type otelFlags struct {
	on       bool
	endpoint string
}

func (f *otelFlags) add(fl *pflag.FlagSet) {
	fl.BoolVar(&f.on, "otel", false, "also export the results as OpenTelemetry traces over OTLP/HTTP, to --otel-endpoint or where OTEL_EXPORTER_OTLP_ENDPOINT says (default http://localhost:4318)")
	fl.StringVar(&f.endpoint, "otel-endpoint", "", "OTLP/HTTP base URL for --otel, such as http://127.0.0.1:4318 (implies --otel)")
}

// writer returns the exporter, or nil when export is off.
func (f *otelFlags) writer(stderr io.Writer) (report.Writer, error) {
	if !f.on && f.endpoint == "" {
		return nil, nil
	}
	e, err := otelexport.New(context.Background(), otelexport.Options{Endpoint: f.endpoint, Version: moduleVersion()})
	if err != nil {
		return nil, usageErr("--otel: %v", err)
	}
	return &otelWriter{e: e, stderr: stderr}, nil
}

// otelWriter reports a failed export on stderr instead of failing the
// run: the results themselves are fine and written elsewhere.
type otelWriter struct {
	e      *otelexport.Exporter
	stderr io.Writer
}

func (w *otelWriter) Write(r *agenteval.Result) error { return w.e.Write(r) }

func (w *otelWriter) Close(sum *results.Summary) error {
	if err := w.e.Close(sum); err != nil {
		fmt.Fprintf(w.stderr, "warning: %v\n", err)
	}
	return nil
}
