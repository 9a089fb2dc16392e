// The package entry: AssemblyScript resolves "wfhost-as" to this file (it does not read
// ascMain). Everything lives in assembly/.
export * from "./assembly/index";
