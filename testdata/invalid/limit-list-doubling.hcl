project = "edge"

# Lists of shared parts: small in memory, 2^21 values to whoever walks them.
locals {
  l0  = [1, 2]
  l1  = [local.l0, local.l0]
  l2  = [local.l1, local.l1]
  l3  = [local.l2, local.l2]
  l4  = [local.l3, local.l3]
  l5  = [local.l4, local.l4]
  l6  = [local.l5, local.l5]
  l7  = [local.l6, local.l6]
  l8  = [local.l7, local.l7]
  l9  = [local.l8, local.l8]
  l10 = [local.l9, local.l9]
  l11 = [local.l10, local.l10]
  l12 = [local.l11, local.l11]
  l13 = [local.l12, local.l12]
  l14 = [local.l13, local.l13]
  l15 = [local.l14, local.l14]
  l16 = [local.l15, local.l15]
  l17 = [local.l16, local.l16]
  l18 = [local.l17, local.l17] # ERROR: Value too large
}
