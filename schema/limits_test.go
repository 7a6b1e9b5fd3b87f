package schema_test

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/provision-dev/provision/provision/consul"
	"github.com/provision-dev/provision/provision/langtest"
	"github.com/provision-dev/provision/schema"
)

// TestFormatTooDeep: fmt refuses a file nested deeper than MaxDepth with
// a located error instead of overflowing hcl's recursive parser (a
// hundred thousand "[" killed the process after 16 s).
func TestFormatTooDeep(t *testing.T) {
	src := []byte("project = \"x\"\n\nlocals {\n  a = " + strings.Repeat("[", 100000) + strings.Repeat("]", 100000) + "\n}\n")
	out, diags := schema.Format(src, "deep.hcl")
	if len(diags) != 1 || diags[0].Summary != "Expression nested too deeply" || diags[0].Subject.Start.Line != 4 || string(out) != string(src) {
		t.Fatalf("Format of a file nested 100,000 deep: %v", diags)
	}
}

// TestLimitsLeaveRoom: a spec of the size the benchmarks declare (10,000
// services from a for expression over a setproduct, with templates, and
// a for expression of 15 in every instance) is inside the limits.
func TestLimitsLeaveRoom(t *testing.T) {
	const n = 10000
	src := fmt.Sprintf(`project = "x"

locals {
  services = { for p in setproduct(range(%d), range(100)) : "svc-${p[0]}-${p[1]}" => { port = 10000 + p[0] * 100 + p[1], tags = [for t in ["a", "b", "c"] : "${t}-${p[1]}"] } }
}

locals {
  ports = range(15)
}

service "svc" {
  for_each = local.services
  port     = each.value.port
  tags     = each.value.tags
  meta     = { for p in local.ports : "p${p}" => tostring(p) }
}
`, n/100)
	path := filepath.Join(t.TempDir(), "main.hcl")
	if err := os.WriteFile(path, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, diags := schema.NewParser(langtest.Language).LoadFiles([]string{path}, schema.Inputs{})
	if diags.HasErrors() || len(consul.Services(cfg)) != n {
		t.Fatalf("%d services, %v", len(consul.Services(cfg)), diags)
	}
}

// TestTokenLimits: what the tokens alone refuse, before hcl parses them,
// each at the place it crosses the limit; one under each limit loads.
func TestTokenLimits(t *testing.T) {
	chain := func(n int) string {
		return "project = \"x\"\n\nlocals {\n  n = 1" + strings.Repeat(" + 1", n) + "\n}\n"
	}
	heredoc := func(n int) string {
		var b strings.Builder
		for i := range n {
			fmt.Fprintf(&b, "%d,x\n", i)
		}
		return "project = \"x\"\n\nlocals {\n  rows = csvdecode(<<EOT\na,b\n" + b.String() + "EOT\n  )\n}\n"
	}
	tests := map[string]struct {
		src, want string
	}{
		"operators under the limit": {chain(schema.MaxOperators), ""},
		"operators over the limit":  {chain(schema.MaxOperators + 1), "Expression too long"},
		"a heredoc at the limit":    {heredoc(schema.MaxHeredocLines - 1), ""},
		"a heredoc over the limit":  {heredoc(schema.MaxHeredocLines), "Heredoc too long"},
		"a chain split over lines":  {"project = \"x\"\n\nlocals {\n  n = (1" + strings.Repeat(" +\n 1", schema.MaxOperators+1) + ")\n}\n", "Expression too long"},
		// A long tuple of one type passed where a list is expected: cty's
		// own conversion took 13 s for this one; it loads.
		"join of a long tuple": {"project = \"x\"\n\nlocals {\n  s = join(\",\", [for p in setproduct(range(400), range(120)) : \"x\"])\n}\n", ""},
	}
	for name, tt := range tests {
		path := filepath.Join(t.TempDir(), "main.hcl")
		if err := os.WriteFile(path, []byte(tt.src), 0o644); err != nil {
			t.Fatal(err)
		}
		_, diags := schema.NewParser(langtest.Language).LoadFiles([]string{path}, schema.Inputs{})
		switch {
		case tt.want == "" && len(diags) > 0:
			t.Errorf("%s: %v", name, diags)
		case tt.want != "" && (len(diags) != 1 || diags[0].Summary != tt.want):
			t.Errorf("%s: %v, want one %q", name, diags, tt.want)
		}
	}
}

// TestTokenLimitsLeaveSpecs: many short expressions in one block, or
// behind comments, are each their own expression, not one deep or long
// one.
func TestTokenLimitsLeaveSpecs(t *testing.T) {
	var conditionals, sums, commented strings.Builder
	for i := range 1100 {
		fmt.Fprintf(&conditionals, "  c%d = var.x ? 1 : 2\n", i)
		fmt.Fprintf(&sums, "  s%d = 1 + 2\n", i)
		fmt.Fprintf(&commented, "a%d = 1 + 2 # c\n", i)
	}
	for name, src := range map[string]string{
		"conditionals in a block": "locals {\n" + conditionals.String() + "}\n",
		"sums in a block":         "locals {\n" + sums.String() + "}\n",
		"commented lines":         commented.String(),
		"an object over lines":    "x = {\n" + sums.String() + "}\n",
	} {
		if _, diags := schema.Format([]byte(src), name+".hcl"); diags.HasErrors() {
			t.Errorf("%s: %v", name, diags)
		}
	}
}

// TestWorkLimitInFileOrder: when the services, or the documents'
// sources, together ask for more work than one load may do (they are
// decoded side by side), the error is at the first block, in file order,
// whose values cross the limit, on every load of the same specs: where a
// load on one core puts it.
func TestWorkLimitInFileOrder(t *testing.T) {
	const documents = "project = \"x\"\n\nsearch \"t1\" {\n  url          = \"http://127.0.0.1:9200\"\n  cluster_name = \"t1\"\n}\n\nindex \"i\" {\n  search = \"t1\"\n  mapping \"m\" {\n    properties = { title = \"string\" }\n  }\n}\n"
	for _, c := range []struct {
		name, head, block string
		// line is where the 500th block's for expression is: each one's
		// range and for expression build over 2,000 values, and the
		// 500th's cross MaxValues.
		line int
	}{
		{"services", "project = \"x\"\n", "\nservice \"s%d\" {\n  port = 8080\n  tags = [for i in range(1000) : \"t\"]\n}\n", 5 + 5*499},
		{"documents", documents, "\ndocument \"m\" \"d%d\" {\n  source = {\n    title = [for i in range(1000) : \"t\"]\n  }\n}\n", 13 + 4 + 6*499},
	} {
		t.Run(c.name, func(t *testing.T) {
			var src strings.Builder
			src.WriteString(c.head)
			for i := range 600 {
				fmt.Fprintf(&src, c.block, i)
			}
			path := filepath.Join(t.TempDir(), "main.hcl")
			if err := os.WriteFile(path, []byte(src.String()), 0o644); err != nil {
				t.Fatal(err)
			}
			var lines []int
			for load := range 3 {
				if load == 2 {
					defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
				}
				_, diags := schema.NewParser(langtest.Language).LoadFiles([]string{path}, schema.Inputs{})
				if len(diags) != 1 || diags[0].Summary != "Spec asks for too much work" {
					t.Fatalf("diagnostics %v, want one that the load asks for too much work", diags)
				}
				lines = append(lines, diags[0].Subject.Start.Line)
			}
			if want := []int{c.line, c.line, c.line}; !slices.Equal(lines, want) {
				t.Errorf("the limit reported at lines %v (the last on one core), want %v", lines, want)
			}
		})
	}
}
