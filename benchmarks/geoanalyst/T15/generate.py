import xarray as xr
r = rng()
lat = np.arange(-87.5, 87.6, 2.5); lon = np.arange(-180.0, 180.0, 5.0)
LA, LO = np.meshgrid(lat, lon, indexing="ij")
tec = 5 + 45 * np.exp(-((LA - 12) / 14) ** 2) * np.exp(-((LO - 20) / 60) ** 2) + 30 * np.exp(-((LA + 12) / 12) ** 2) * np.exp(-((LO - 10) / 55) ** 2)
tec = tec + r.normal(0, 1.0, tec.shape)
tec[r.random(tec.shape) < 0.03] = -1.0  # invalid retrievals
ds = xr.Dataset({"TEC": (("latitude", "longitude"), tec.astype("float32"), {"units": "TECU", "long_name": "total electron content", "valid_min": 0.0})},
                coords={"latitude": lat, "longitude": lon}, attrs={"title": "Synthetic ionospheric TEC map, 12:00 UT"})
ds.to_netcdf("data/space_weather.nc")
