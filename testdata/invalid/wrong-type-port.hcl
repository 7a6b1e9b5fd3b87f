project = "edge"

service "api" {
  port = "http" # ERROR: Incorrect attribute value type
}
