project = "edge"

service "api" {
  address = var.api_host # ERROR: Reference to undeclared input variable
  port    = 8080
}
