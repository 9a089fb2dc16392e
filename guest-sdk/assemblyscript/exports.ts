// The ABI's guest exports; a module's entry file re-exports them:
// `export * from "wfhost-as/exports";`
export * from "./assembly/exports";
