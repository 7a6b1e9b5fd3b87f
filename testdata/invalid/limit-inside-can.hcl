project = "edge" # ERROR: Spec asks for too much work

# can() turns the refusal into false; what follows would be unknown.
locals {
  big  = can(setproduct(range(1000), range(1000)))
  tags = [for t in ["a", "b"] : t]
}

service "api" {
  port = 8080
  tags = local.tags
}
