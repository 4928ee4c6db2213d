package modelloop

import "errors"

// Errors.
var (
	// ErrStepLimit: the model still called tools after MaxSteps steps. Run
	// returns it with the partial Result.
	ErrStepLimit = errors.New("modelloop: step limit reached")
	// ErrNoModel: Turn.Model is nil.
	ErrNoModel = errors.New("modelloop: no model")
	// ErrNoExec: the model called a tool but Turn.Exec is nil.
	ErrNoExec = errors.New("modelloop: no tool executor")
)
