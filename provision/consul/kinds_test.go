package consul

// The shipped specs these tests load declare indices and documents too,
// whose kinds the search package registers.
import _ "github.com/provision-dev/provision/provision/search"
