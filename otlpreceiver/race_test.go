//go:build race

package otlpreceiver

// raceDetector says the race detector is on: it keeps shadow memory for
// every byte, so resident memory says nothing of the receiver's own.
const raceDetector = true
