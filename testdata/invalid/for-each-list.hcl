project = "edge"

service "api" {
  for_each = ["a", "b"] # ERROR: Invalid for_each argument
  port     = 8080
}
