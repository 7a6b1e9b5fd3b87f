package schema_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclparse"
	"github.com/provision-dev/provision/provision/consul"
	"github.com/provision-dev/provision/provision/langtest"
	"github.com/provision-dev/provision/schema"
)

// BenchmarkLoad loads a spec of 10,000 and of 100,000 services with meta
// and a check each, next to the baseline of hcl parsing the same file
// alone: decoding and checking should stay of the order of parsing, and
// the cost per service the same at both sizes. The same services from one
// for_each over a local map load beside them: a for_each should cost
// about what the blocks written out cost. (make bench measures the
// frontend-heavy shape end to end.)
func BenchmarkLoad(b *testing.B) {
	for _, n := range []int{10000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) { benchmarkLoad(b, n) })
	}
}

func benchmarkLoad(b *testing.B, n int) {
	var src, each bytes.Buffer
	header := "project = \"bench\"\n\nvariable \"port_base\" {\n  type    = number\n  default = 10000\n}\n"
	src.WriteString(header)
	for i := range n { // ports repeat past 50,000, as the agent allows
		fmt.Fprintf(&src, `
service "svc-%d" {
  port = var.port_base + %d
  meta = { team = "edge", shard = "%d" }
  check "alive" {
    tcp      = "127.0.0.1:${var.port_base + %d}"
    interval = "10s"
  }
}
`, i, i%50000, i%16, i%50000)
	}
	each.WriteString(header + "\nlocals {\n  services = {\n")
	for i := range n {
		fmt.Fprintf(&each, "    \"%d\" = { offset = %d, shard = \"%d\" }\n", i, i%50000, i%16)
	}
	each.WriteString(`  }
}

service "svc" {
  for_each = local.services
  port     = var.port_base + each.value.offset
  meta     = { team = "edge", shard = each.value.shard }
  check "alive" {
    tcp      = "127.0.0.1:${var.port_base + each.value.offset}"
    interval = "10s"
  }
}
`)
	written, forEach := b.TempDir(), b.TempDir()
	path := filepath.Join(written, "main.hcl")
	for dir, spec := range map[string][]byte{written: src.Bytes(), forEach: each.Bytes()} {
		if err := os.WriteFile(filepath.Join(dir, "main.hcl"), spec, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("baseline-hcl-parse", func(b *testing.B) {
		for b.Loop() {
			if _, diags := hclparse.NewParser().ParseHCLFile(path); diags.HasErrors() {
				b.Fatal(diags)
			}
		}
	})
	for name, dir := range map[string]string{"load": written, "load-for-each": forEach} {
		b.Run(name, func(b *testing.B) {
			var cfg *schema.Config
			for b.Loop() {
				var diags hcl.Diagnostics
				cfg, diags = schema.NewParser(langtest.Language).LoadDir(dir, schema.Inputs{})
				if diags.HasErrors() || len(consul.Services(cfg)) != n {
					b.Fatalf("%d services, %s", len(consul.Services(cfg)), diags)
				}
			}
			// What a load keeps per service once done: the decoded
			// declarations and the sources diagnostics quote.
			var m runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&m)
			b.ReportMetric(float64(m.HeapAlloc)/float64(n), "retained-B/service")
			runtime.KeepAlive(cfg)
		})
	}
}
