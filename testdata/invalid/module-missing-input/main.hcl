project = "m"

module "svc" { # ERROR: Missing required module input
  source   = "./modules/svc"
  for_each = { a = 1, b = 2 }
  name     = "svc-${each.key}"
}
