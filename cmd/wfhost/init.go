package main

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/template"
	"unicode"
	"unicode/utf8"

	"github.com/urfave/cli/v2"
)

// `wfhost init --lang LANG DIR` writes a workflow project that builds and deploys outside this
// repository with two commands, `make` and `wfhost deploy NAME.wasm`. The guest SDKs are not
// published (no module proxy, crates.io or npm entry), so the project takes its SDK by path
// from a wfhost checkout, the way each ecosystem does that: a require and a replace in go.mod
// (with go.sum filled in, so the build needs no network), a cargo path dependency, an npm
// `file:` dependency. The checkout is --sdk, else the one the running binary was built in.

// initTemplates are the projects' files, each ending in ".tmpl" so that no Go tool reads a
// template's go.mod or main.go as part of this module. "all:" keeps .gitignore and .cargo.
//
//go:embed all:initdata
var initTemplates embed.FS

// initLang is what `init` writes for one language: the template directories (later ones
// win), the SDK's directory in the checkout and a file in it that proves it is there.
type initLang struct {
	title  string
	dirs   []string
	sdkDir string
	marker string
	sdkRef string // the project's files that name the checkout's path
}

var initLangs = map[string]initLang{
	"go": {title: "Go", dirs: []string{"common", "gomod", "go"}, sdkDir: "guest-sdk/go",
		marker: "guest-sdk/go/go.mod", sdkRef: "go.mod"},
	"tinygo": {title: "Go for TinyGo", dirs: []string{"common", "gomod", "tinygo"}, sdkDir: "guest-sdk/go",
		marker: "guest-sdk/go/tinygo/wasip1-debian.json", sdkRef: "go.mod and the Makefile"},
	"rust": {title: "Rust", dirs: []string{"common", "rust"}, sdkDir: "guest-sdk/rust",
		marker: "guest-sdk/rust/Cargo.toml", sdkRef: "Cargo.toml"},
	"assemblyscript": {title: "AssemblyScript", dirs: []string{"common", "assemblyscript"}, sdkDir: "guest-sdk/assemblyscript",
		marker: "guest-sdk/assemblyscript/package.json", sdkRef: "package.json"},
}

func initLangNames() []string {
	names := make([]string, 0, len(initLangs))
	for name := range initLangs {
		names = append(names, name)
	}
	slices.Sort(names)
	return names
}

func initCommand() *cli.Command {
	return &cli.Command{
		Name:      "init",
		Usage:     "write a new workflow project (one workflow, a Makefile, a README) into DIR, which must be new or empty",
		ArgsUsage: "DIR",
		Flags: []cli.Flag{
			&cli.StringFlag{Name: "lang", Required: true, EnvVars: []string{"WFHOST_INIT_LANG"},
				Usage: "the guest language: " + strings.Join(initLangNames(), ", ")},
			&cli.StringFlag{Name: "sdk", EnvVars: []string{"WFHOST_SDK"},
				Usage: "the root of the wfhost checkout whose guest SDK the project uses (default: the checkout this binary was built in)"},
		},
		Action: func(c *cli.Context) error {
			a, err := args(c, "DIR")
			if err != nil {
				return err
			}
			p, err := newInitProject(c.String("lang"), c.String("sdk"), a[0])
			if err != nil {
				return err
			}
			files, err := p.write(a[0])
			if err != nil {
				return err
			}
			w := c.App.Writer
			fmt.Fprintf(w, "wrote a workflow project in %s (%s):\n", a[0], p.LangTitle)
			for _, f := range files {
				fmt.Fprintf(w, "  %s\n", f)
			}
			fmt.Fprintf(w, "build and deploy it:\n  cd %s\n  make\n  wfhost deploy %s.wasm\n", a[0], p.Name)
			return nil
		},
	}
}

// initProject is what the templates see.
type initProject struct {
	Name      string // the project's name, from DIR: the crate, npm package and .wasm file; the Go module is example/Name
	Lang      string
	LangTitle string
	SDKDir    string // the SDK's directory in the checkout, slash-separated
	SDKRef    string
	Go        struct {
		Version  string   // the SDK's go directive
		Indirect []string // the SDK's requirements, "path version"
	}
	ASCVersion string // the AssemblyScript compiler the SDK is built with
	sdkRoot    string
}

// SDKPath is the absolute path of sub (slash-separated) in the checkout.
func (p *initProject) SDKPath(sub string) string {
	return filepath.Join(p.sdkRoot, filepath.FromSlash(sub))
}

func newInitProject(lang, sdk, dir string) (*initProject, error) {
	l, ok := initLangs[lang]
	if !ok {
		return nil, usagef("--lang %q: want one of %s", lang, strings.Join(initLangNames(), ", "))
	}
	if dir == "" {
		return nil, usagef("init: DIR is empty")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, usagef("init: %v", err)
	}
	root, err := initSDKRoot(sdk, l)
	if err != nil {
		return nil, err
	}
	p := &initProject{Name: projectName(filepath.Base(abs)), Lang: lang, LangTitle: l.title,
		SDKDir: l.sdkDir, SDKRef: l.sdkRef, sdkRoot: root}
	switch lang {
	case "go", "tinygo":
		if err := p.readGoMod(); err != nil {
			return nil, err
		}
	case "assemblyscript":
		if err := p.readPackageJSON(); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// initSDKRoot is the checkout the project takes its SDK from: sdk when given, else the one
// that holds the running binary (bin/wfhost of `make build`). The path goes into go.mod, a
// Makefile, Cargo.toml and package.json, so one that any of them would need to escape (a
// space, a quote, a $) is refused rather than written wrong.
func initSDKRoot(sdk string, l initLang) (string, error) {
	if sdk == "" {
		found, err := checkoutOfExecutable(l.marker)
		if err != nil {
			return "", err
		}
		sdk = found
	}
	if !utf8.ValidString(sdk) {
		return "", usagef("--sdk %q is not UTF-8", sdk)
	}
	abs, err := filepath.Abs(sdk)
	if err != nil {
		return "", usagef("--sdk %s: %v", sdk, err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	if i := strings.IndexFunc(abs, unsafePathRune); i >= 0 {
		r, _ := utf8.DecodeRuneInString(abs[i:])
		return "", usagef("--sdk %q: the path holds %q, which the project's build files cannot carry; use a path without spaces, quotes or shell characters (a symbolic link will do)", abs, r)
	}
	if _, err := os.Stat(filepath.Join(abs, filepath.FromSlash(l.marker))); err != nil {
		return "", usagef("--sdk %s is not a wfhost checkout with this SDK: %s is missing", abs, l.marker)
	}
	return abs, nil
}

// unsafePathRune is a character that a Makefile, go.mod, TOML or JSON string would need
// escaped or quoted.
func unsafePathRune(r rune) bool {
	return unicode.IsSpace(r) || unicode.IsControl(r) || r == utf8.RuneError || strings.ContainsRune("\"'`\\$#%;&|<>*?(){}[]!=,", r)
}

// checkoutOfExecutable is the wfhost checkout that holds the running binary: the nearest of
// its directories' ancestors with marker in it.
func checkoutOfExecutable(marker string) (string, error) {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	if err != nil {
		return "", usagef("init: cannot tell where this binary is (%v): give the wfhost checkout with --sdk", err)
	}
	for dir := filepath.Dir(exe); ; {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(marker))); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			break
		}
		dir = parent
	}
	return "", usagef("init: %s is not inside a wfhost checkout: give the checkout whose guest SDK the project should use with --sdk PATH", exe)
}

// projectName makes DIR's base name a name that Go, cargo and npm all take: lower-case ASCII
// letters, digits and single hyphens, starting with a letter.
func projectName(base string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(base) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			b.WriteRune(r)
		case !strings.HasSuffix(b.String(), "-"):
			b.WriteByte('-')
		}
	}
	name := strings.Trim(b.String(), "-")
	if len(name) > 50 {
		name = strings.TrimRight(name[:50], "-")
	}
	switch {
	case name == "":
		return "workflow"
	case name[0] >= '0' && name[0] <= '9':
		return "wf-" + name
	case name == "wfhost":
		// cargo refuses a package named as the SDK crate it depends on (a lockfile collision).
		return name + "-workflow"
	}
	return name
}

// readGoMod takes the SDK module's go version and requirements from its go.mod, so the
// project's go.mod is what `go mod tidy` would leave.
func (p *initProject) readGoMod() error {
	f, err := os.Open(p.SDKPath("guest-sdk/go/go.mod"))
	if err != nil {
		return usagef("--sdk: %v", err)
	}
	defer f.Close()
	var module string
	inRequire := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "//")
		fields := strings.Fields(line)
		switch {
		case len(fields) == 0:
		case inRequire && fields[0] == ")":
			inRequire = false
		case inRequire && len(fields) == 2:
			p.Go.Indirect = append(p.Go.Indirect, fields[0]+" "+fields[1])
		case fields[0] == "module" && len(fields) == 2:
			module = fields[1]
		case fields[0] == "go" && len(fields) == 2:
			p.Go.Version = fields[1]
		case fields[0] == "require" && len(fields) == 2 && fields[1] == "(":
			inRequire = true
		case fields[0] == "require" && len(fields) == 3:
			p.Go.Indirect = append(p.Go.Indirect, fields[1]+" "+fields[2])
		}
	}
	if err := sc.Err(); err != nil {
		return fmt.Errorf("reading the SDK's go.mod: %w", err)
	}
	if module != "github.com/wfhost/wfhost/guest-sdk/go" || p.Go.Version == "" {
		return usagef("--sdk %s: guest-sdk/go/go.mod is not the wfhost Go SDK's", p.sdkRoot)
	}
	return nil
}

// readPackageJSON takes the AssemblyScript compiler version the SDK is built with.
func (p *initProject) readPackageJSON() error {
	raw, err := os.ReadFile(p.SDKPath("guest-sdk/assemblyscript/package.json"))
	if err != nil {
		return usagef("--sdk: %v", err)
	}
	var pkg struct {
		Name             string            `json:"name"`
		PeerDependencies map[string]string `json:"peerDependencies"`
	}
	if err := json.Unmarshal(raw, &pkg); err != nil || pkg.Name != "wfhost-as" || pkg.PeerDependencies["assemblyscript"] == "" {
		return usagef("--sdk %s: guest-sdk/assemblyscript/package.json is not the wfhost-as SDK's", p.sdkRoot)
	}
	p.ASCVersion = pkg.PeerDependencies["assemblyscript"]
	return nil
}

// write renders the project into dir, which must not exist or be empty, and returns the
// files it wrote, relative to dir.
func (p *initProject) write(dir string) ([]string, error) {
	if err := checkInitDir(dir); err != nil {
		return nil, err
	}
	files := map[string][]byte{} // the project's path -> content
	funcs := template.FuncMap{"quote": strconv.Quote, "json": func(s string) (string, error) {
		b, err := json.Marshal(s)
		return string(b), err
	}}
	for _, d := range initLangs[p.Lang].dirs {
		err := fs.WalkDir(initTemplates, "initdata/"+d, func(name string, e fs.DirEntry, err error) error {
			if err != nil || e.IsDir() {
				return err
			}
			src, err := initTemplates.ReadFile(name)
			if err != nil {
				return err
			}
			t, err := template.New(name).Funcs(funcs).Option("missingkey=error").Parse(string(src))
			if err != nil {
				return err
			}
			var out bytes.Buffer
			if err := t.Execute(&out, p); err != nil {
				return err
			}
			rel := strings.TrimSuffix(strings.TrimPrefix(name, "initdata/"+d+"/"), ".tmpl")
			files[rel] = out.Bytes()
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("rendering the %s templates: %w", d, err)
		}
	}
	switch p.Lang {
	case "go", "tinygo":
		// go.sum gets the SDK's sums: its requirements' go.mod files are part of the module
		// graph, and without their sums `go build` would stop to ask for `go mod tidy`.
		sum, err := os.ReadFile(p.SDKPath("guest-sdk/go/go.sum"))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("reading the SDK's go.sum: %w", err)
		}
		if len(sum) > 0 {
			files["go.sum"] = sum
		}
	}
	names := make([]string, 0, len(files))
	for name := range files {
		names = append(names, name)
	}
	slices.Sort(names)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("init: %w", err)
	}
	for _, name := range names {
		target := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return nil, fmt.Errorf("init: %w", err)
		}
		// O_EXCL: a file that appeared since the check is not overwritten.
		f, err := os.OpenFile(target, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
		if err != nil {
			return nil, fmt.Errorf("init: %w", err)
		}
		_, err = f.Write(files[name])
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, fmt.Errorf("init: writing %s: %w", target, err)
		}
	}
	return names, nil
}

// checkInitDir refuses a DIR that holds anything: init never overwrites or mixes into a
// project.
func checkInitDir(dir string) error {
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return usagef("init: %v", err)
	case !fi.IsDir():
		return usagef("init: %s exists and is not a directory", dir)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return usagef("init: %v", err)
	}
	if len(entries) > 0 {
		return usagef("init: %s is not empty (it holds %s): give a new or empty directory", dir, path.Base(entries[0].Name()))
	}
	return nil
}
