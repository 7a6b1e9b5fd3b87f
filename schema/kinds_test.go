package schema_test

// The specs of these tests declare every kind and place provision has,
// in the language the CLI builds; the package's own tests read it as
// schema.Everything.
import (
	"github.com/provision-dev/provision/provision/langtest"
	"github.com/provision-dev/provision/schema"
)

func init() { schema.Everything = langtest.Language }
