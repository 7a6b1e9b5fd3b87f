package schema

// Everything is the language of every kind and place provision has. The
// kinds' packages import this one, so only a test outside it can name
// them: kinds_test.go sets it before any test runs.
var Everything *Language
