# A residential block (UTM 17N, 1 m): parcels along two streets; houses,
# driveways, patios and the streets impervious, gardens pervious.
r = rng()
x0, y0 = 560_000.0, 3_920_130.0
shape = (130, 400)
imp = np.zeros(shape, dtype="uint8")
imp[60:70, :] = 1                                              # the street between the two rows
imp[:, 0:12] = 1                                                 # the cross street
parcels = []
for row, (top, bottom) in enumerate([(0, 60), (70, 130)]):
    xs = np.cumsum(np.r_[12, r.integers(13, 22, 40)])
    xs = xs[xs < 400]
    for a, b in zip(xs[:-1], xs[1:]):
        parcels.append(shapely.box(x0 + a, y0 - bottom, x0 + b, y0 - top))
        house_w = int((b - a) * r.uniform(0.4, 0.7)); house_d = int(r.uniform(10, 16))
        front = top + 40 if row == 0 else top + 18
        hx = a + int((b - a - house_w) / 2)
        imp[front - house_d // 2: front + house_d // 2, hx: hx + house_w] = 1
        dx = hx + house_w - 4
        if row == 0:
            imp[front + house_d // 2: 60, dx: dx + 4] = 1
        else:
            imp[70: front - house_d // 2, dx: dx + 4] = 1
        if r.uniform() < 0.4:
            imp[front - house_d // 2 - 5: front - house_d // 2, hx: hx + int(house_w * 0.5)] = 1   # patio
noise = smooth_field(shape, r, 2) > 0.9
imp = np.where(noise & (imp == 0), 1, imp).astype("uint8")
write_raster("data/impervious.tif", imp, from_origin(x0, y0, 1, 1), "EPSG:26917")
gpd.GeoDataFrame({"Parcel_ID": [f"P{k + 1:03d}" for k in range(len(parcels))], "Zoning": "R-1",
                  "Acres": [round(p.area / 4046.856, 3) for p in parcels]}, geometry=parcels, crs=26917).to_file("data/parcels.shp")
