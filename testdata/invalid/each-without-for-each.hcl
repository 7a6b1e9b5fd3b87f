project = "edge"

service "api" {
  id   = "api-${each.key}" # ERROR: Reference to "each" in a block without for_each
  port = 8080
}
