project = "edge"

agent "node-a" {
  address = "10.0.0.5:8500"
}

agent "node-b" {
  address = "10.0.0.6:8500"
}

import {
  to = service.billing # ERROR: Import of an undeclared object
}
