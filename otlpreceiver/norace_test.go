//go:build !race

package otlpreceiver

const raceDetector = false
