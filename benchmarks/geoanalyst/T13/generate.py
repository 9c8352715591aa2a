import xarray as xr
r = rng()
lat = np.arange(-40.0, -9.9, 2.0); lon = np.arange(-40.0, -4.9, 2.5); depth = np.array([5, 10, 20, 30, 50, 75, 100, 150, 200, 300, 400, 500, 700, 1000], float)
L, D = np.meshgrid(lat, depth, indexing="ij")
temp = np.empty((len(depth), len(lat), len(lon))); sal = np.empty_like(temp)
for k, d in enumerate(depth):
    surf = 26 + 0.25 * lat[:, None] + 0 * lon[None, :]
    temp[k] = 4 + (surf - 4) * np.exp(-d / 180) + r.normal(0, 0.2, (len(lat), len(lon)))
    sal[k] = 34.4 + 1.4 * np.exp(-d / 250) * (1 + 0.02 * lat[:, None] / 10) - 0.3 * np.exp(-((d - 800) / 200) ** 2) + r.normal(0, 0.03, (len(lat), len(lon)))
ds = xr.Dataset({"sea_water_potential_temperature": (("depth", "latitude", "longitude"), temp.astype("float32"), {"units": "degC", "standard_name": "sea_water_potential_temperature"}),
                 "sea_water_practical_salinity": (("depth", "latitude", "longitude"), sal.astype("float32"), {"units": "1", "standard_name": "sea_water_salinity"})},
                coords={"depth": ("depth", depth, {"units": "m", "positive": "down"}), "latitude": ("latitude", lat, {"units": "degrees_north"}), "longitude": ("longitude", lon, {"units": "degrees_east"})},
                attrs={"title": "Synthetic South Atlantic profiles (gisclaw benchmark)"})
ds.to_netcdf("data/atlantic_profiles.nc")
