// What the SDK knows about the pass in progress, shared by the workflow API and the abort
// handler (which must know whether a step callback is running when it fires).

/** inStep is true between step_run's EXECUTE and step_done. */
export let inStep: bool = false;
/** currentStep names the step whose callback runs, for the abort handler's message. */
export let currentStep: string = "";

export function enterStep(name: string): void {
  inStep = true;
  currentStep = name;
}

export function leaveStep(): void {
  inStep = false;
  currentStep = "";
}
