project = "edge"

service "api" {
  port = 8080
  tags = ["a" "b"] # ERROR: Missing item separator
}
