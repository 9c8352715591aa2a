r = rng()
shape = (300, 300)
veg = smooth_field(shape, r, 10)
scar = (blob(shape, (140, 170), 45) * (0.6 + 0.8 * smooth_field(shape, rng(1), 6))) > 0.55
transform = from_origin(300_000, 5_200_000, 30, 30)
def scene(burnt, noise_seed):
    n = rng(noise_seed).normal(0, 0.01, (7,) + shape)
    refl = np.empty((7,) + shape)
    base = [0.04, 0.05, 0.07, 0.06, 0.25, 0.15, 0.08]
    for b in range(7):
        refl[b] = base[b] + n[b]
    refl[4] += 0.2 * veg; refl[3] -= 0.02 * veg; refl[6] -= 0.03 * veg
    if burnt is not None:
        refl[4][burnt] = 0.12 + 0.02 * veg[burnt]; refl[6][burnt] = 0.22 + 0.03 * veg[burnt]; refl[5][burnt] = 0.2
    return np.clip(refl * 10000 + 7000, 1, 65000).astype("uint16")
write_raster("data/G_2014.tif", scene(None, 11), transform, "EPSG:32612")
write_raster("data/G_2015.tif", scene(scar, 12), transform, "EPSG:32612")
