// Package modelloop runs one user turn through a model with tools: send
// the prompt, history, message and tools; run the tool calls the model
// asks for (checking each against the offered tools, the nudges and the
// tool's parameter schema first); send the results back; repeat until the
// model answers without calling a tool, or MaxSteps is reached.
//
// A tool call that cannot run never reaches Exec: the model gets an error
// result instead ({"error":{"code":"NOT_FOUND"|"PERMISSION_DENIED"|
// "INVALID_INPUT",...}}) and may try again. docs/MODEL.md lists them.
//
// A use:
//
//	client, _ := llm.New(cfg)
//	res, err := modelloop.Run(ctx, modelloop.Turn{
//		Model:  client,
//		System: pkg.Prompt,
//		User:   d.Message, // router.Decision
//		Tools:  tools,     // []capabilities.ToolDef the nudges allow
//		Exec:   caller,    // capabilities.ToolCaller: built-ins, then bindings
//	})
//	if res.Done { r.Done(conv) } // a tool result said {"done": true}
//	log.Append(res.Messages...)
package modelloop
