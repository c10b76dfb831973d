-- Wireshark dissector for the CSIG congestion signal tag, as written by
-- csigsim (crates/csigsim/src/wire/csig.rs).
--
-- The tag sits like an 802.1Q tag between the source MAC and the EtherType:
--   | DA(6) | SA(6) | TPID(2) | body (2 compact / 6 wide) | EtherType(2) | ...
-- Body bits, most significant first (widths are preferences, order is fixed,
-- leftover low bits are reserved):
--   compact (16 bits): T(3) | d(1) | S(5) | LM(7)
--   wide    (48 bits): LM(16) | T(4) | S(20) | d(1) | reserved(7)
-- After the tag the rest of the frame goes to Wireshark's "ethertype" table,
-- so IPv4 / UDP / InfiniBand (RoCEv2, UDP 4791) dissect as usual.
--
-- Use: tshark -X lua_script:tools/wireshark/csig.lua -r capture.pcap
--  or copy this file into Wireshark's personal Lua plugins folder.
-- Preferences (Edit > Preferences > Protocols > CSIG, or tshark -o):
--   csig.tpid_compact, csig.tpid_wide (decimal), csig.{compact,wide}_{t,s,lm}_bits,
--   csig.{compact,wide}_d_bit.
--
-- A Lua dissector can only pass on a sub-Tvb whose reported length equals
-- its captured length. A frame cut by the snaplen (pcap's captured length
-- below its original length) is therefore passed on behind the tag as a new
-- buffer of its original length, the bytes not captured as zeros, so that
-- IPv4 and UDP see their full lengths and flag nothing.

local csig = Proto("csig", "CSIG congestion signal tag")

local type_names = { [0] = "ABW", [1] = "ABW/C", [2] = "Delay", [3] = "nQD" }

local f_tpid = ProtoField.uint16("csig.tpid", "TPID", base.HEX)
local f_size = ProtoField.string("csig.size", "Tag size")
local f_type = ProtoField.uint8("csig.type", "Signal type (T)", base.DEC, type_names)
local f_d = ProtoField.bool("csig.d", "Do not update (d)")
local f_value = ProtoField.uint32("csig.value", "Signal value (S)", base.DEC)
local f_locator = ProtoField.uint16("csig.locator", "Locator metadata (LM)", base.DEC)
local f_etype = ProtoField.uint16("csig.etype", "EtherType", base.HEX)
csig.fields = { f_tpid, f_size, f_type, f_d, f_value, f_locator, f_etype }

local e_layout = ProtoExpert.new("csig.bad_layout", "CSIG field widths exceed the tag body",
    expert.group.PROTOCOL, expert.severity.ERROR)
local e_short = ProtoExpert.new("csig.short", "Frame ends inside the CSIG tag",
    expert.group.MALFORMED, expert.severity.ERROR)
csig.experts = { e_layout, e_short }

-- Same defaults as CsigCodec::default() in the simulator.
csig.prefs.tpid_compact = Pref.uint("Compact tag TPID", 0x9900,
    "EtherType announcing a 4-byte compact tag (default 0x9900 = 39168)")
csig.prefs.tpid_wide = Pref.uint("Wide tag TPID", 0x9901,
    "EtherType announcing an 8-byte wide tag (default 0x9901 = 39169)")
csig.prefs.compact_t_bits = Pref.uint("Compact: T bits", 3,
    "Compact body, MSB first: T, d, S, LM, then reserved bits")
csig.prefs.compact_d_bit = Pref.bool("Compact: has d bit", true, "A 1-bit d field follows T")
csig.prefs.compact_s_bits = Pref.uint("Compact: S bits", 5, "Width of the signal value")
csig.prefs.compact_lm_bits = Pref.uint("Compact: LM bits", 7, "Width of the locator metadata")
csig.prefs.wide_t_bits = Pref.uint("Wide: T bits", 4,
    "Wide body, MSB first: LM, T, S, d, then reserved bits")
csig.prefs.wide_d_bit = Pref.bool("Wide: has d bit", true, "A 1-bit d field follows S")
csig.prefs.wide_s_bits = Pref.uint("Wide: S bits", 20, "Width of the signal value")
csig.prefs.wide_lm_bits = Pref.uint("Wide: LM bits", 16, "Width of the locator metadata")

-- Shift of each field from the body's least significant bit, walking down
-- from the top in the size's field order; nil if the widths do not fit.
local function layout(size)
    local p = csig.prefs
    local t, s, lm, d
    if size == "compact" then
        t, s, lm, d = p.compact_t_bits, p.compact_s_bits, p.compact_lm_bits, p.compact_d_bit
    else
        t, s, lm, d = p.wide_t_bits, p.wide_s_bits, p.wide_lm_bits, p.wide_d_bit
    end
    local dbits = d and 1 or 0
    local top = (size == "compact") and 16 or 48
    if t > 8 or s > 32 or lm > 16 or t + dbits + s + lm > top then
        return nil
    end
    local sh = { t_bits = t, s_bits = s, lm_bits = lm, has_d = d }
    if size == "compact" then
        sh.t = top - t
        sh.d = sh.t - dbits
        sh.s = sh.d - s
        sh.lm = sh.s - lm
    else
        sh.lm = top - lm
        sh.t = sh.lm - t
        sh.s = sh.t - s
        sh.d = sh.s - dbits
    end
    return sh
end

-- Plain arithmetic instead of bit ops: 48-bit values are exact in doubles,
-- and this works the same on Lua 5.2 and 5.4.
local function bits(v, shift, width)
    return math.floor(v / 2 ^ shift) % (2 ^ width)
end

local ethertype_table = DissectorTable.get("ethertype")

function csig.dissector(tvb, pinfo, tree)
    -- The Ethernet dissector consumed the TPID; the table tells us which.
    local tpid = pinfo.match_uint
    local size
    if tpid == csig.prefs.tpid_compact then
        size = "compact"
    elseif tpid == csig.prefs.tpid_wide then
        size = "wide"
    else
        return 0
    end
    local body_len = (size == "compact") and 2 or 6

    local subtree = tree:add(csig, tvb(0, math.min(tvb:len(), body_len + 2)))
    subtree:add(f_tpid, tvb(0, 0), tpid):set_generated()
    subtree:add(f_size, tvb(0, 0), size):set_generated()
    if tvb:len() < body_len + 2 then
        subtree:add_proto_expert_info(e_short)
        return 0
    end

    local body = tvb(0, body_len)
    local sh = layout(size)
    if sh == nil then
        subtree:add_proto_expert_info(e_layout)
    else
        local v = 0
        for i = 0, body_len - 1 do
            v = v * 256 + tvb(i, 1):uint()
        end
        local t = bits(v, sh.t, sh.t_bits)
        local s = bits(v, sh.s, sh.s_bits)
        local lm = bits(v, sh.lm, sh.lm_bits)
        local d = sh.has_d and bits(v, sh.d, 1) == 1
        subtree:add(f_type, body, t)
        subtree:add(f_d, body, d)
        subtree:add(f_value, body, s)
        subtree:add(f_locator, body, lm)
        subtree:append_text(string.format(", %s, %s = %d, LM %d%s",
            size, type_names[t] or ("type " .. t), s, lm, d and ", d" or ""))
    end

    local inner = tvb(body_len, 2):uint()
    subtree:add(f_etype, tvb(body_len, 2))
    if tvb:len() > body_len + 2 then
        -- A Lua sub-Tvb cannot keep the reported length of a frame cut by
        -- the snaplen: its reported length is what was captured, and IPv4
        -- and UDP behind the tag would flag their length fields. So a cut
        -- frame goes on as a new buffer of its full length, the bytes the
        -- capture left out as zeros (csigsim stores zeros for the payload
        -- anyway), shown as its own data source.
        local rest = tvb(body_len + 2):tvb()
        local missing = tvb:reported_length_remaining(body_len + 2) - rest:len()
        if missing > 0 and missing <= 65535 then
            local bytes = tvb(body_len + 2):bytes()
            bytes:set_size(bytes:len() + missing)
            rest = bytes:tvb("Behind the CSIG tag (bytes not captured: zeros)")
        end
        -- Keep a dissector's exception from turning into a Lua error on every frame.
        pcall(ethertype_table.try, ethertype_table, inner, rest, pinfo, tree)
    end
    return tvb:len()
end

-- Keep the table registration in step with the TPID preferences.
local registered = {}
local function register()
    for _, t in ipairs(registered) do
        ethertype_table:remove(t, csig)
    end
    registered = { csig.prefs.tpid_compact, csig.prefs.tpid_wide }
    for _, t in ipairs(registered) do
        ethertype_table:add(t, csig)
    end
end

function csig.prefs_changed()
    register()
end

register()
