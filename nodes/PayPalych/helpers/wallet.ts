/*
 * The destinations of crypto and Steam payouts: a wallet address on its network (Tron or
 * Ethereum) and a Steam login, checked before anything is sent. Money sent to a mistyped wallet
 * is gone for good, so an address must have its network's shape and, where it carries one, a
 * valid checksum (Tron: base58check; Ethereum: EIP-55 when the address mixes upper and lower case).
 */

import { createHash } from 'crypto';
import type { INode } from 'n8n-workflow';

import { PAYOUT_NETWORKS } from '../../shared';
import { inputError } from './validation';

export type PayoutNetwork = (typeof PAYOUT_NETWORKS)[number];

const BASE58 = '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz';

/** The bytes of a base58 text, or undefined when a character is not base58. */
function base58Bytes(text: string): number[] | undefined {
	const bytes: number[] = [];
	for (const char of text) {
		let carry = BASE58.indexOf(char);
		if (carry < 0) return undefined;
		for (let i = 0; i < bytes.length; i++) {
			carry += bytes[i] * 58;
			bytes[i] = carry & 0xff;
			carry >>= 8;
		}
		while (carry > 0) {
			bytes.push(carry & 0xff);
			carry >>= 8;
		}
	}
	for (const char of text) {
		if (char !== '1') break;
		bytes.push(0);
	}
	return bytes.reverse();
}

const sha256 = (data: Uint8Array) => createHash('sha256').update(data).digest();

/** A Tron address: 21 bytes (0x41 and the account) and the first 4 bytes of their double SHA-256. */
export function tronChecksumValid(address: string): boolean {
	const bytes = base58Bytes(address);
	if (!bytes || bytes.length !== 25 || bytes[0] !== 0x41) return false;
	const payload = Uint8Array.from(bytes.slice(0, 21));
	const check = sha256(sha256(payload));
	return bytes.slice(21).every((byte, i) => byte === check[i]);
}

const MASK = (1n << 64n) - 1n;
const ROUND_CONSTANTS = [
	0x1n,
	0x8082n,
	0x800000000000808an,
	0x8000000080008000n,
	0x808bn,
	0x80000001n,
	0x8000000080008081n,
	0x8000000000008009n,
	0x8an,
	0x88n,
	0x80008009n,
	0x8000000an,
	0x8000808bn,
	0x800000000000008bn,
	0x8000000000008089n,
	0x8000000000008003n,
	0x8000000000008002n,
	0x8000000000000080n,
	0x800an,
	0x800000008000000an,
	0x8000000080008081n,
	0x8000000000008080n,
	0x80000001n,
	0x8000000080008008n,
];
/** Rotation of lane (x, y), at ROTATIONS[x][y]. */
const ROTATIONS = [
	[0, 36, 3, 41, 18],
	[1, 44, 10, 45, 2],
	[62, 6, 43, 15, 61],
	[28, 55, 25, 21, 56],
	[27, 20, 39, 8, 14],
];
const rotate = (lane: bigint, by: number) =>
	by === 0 ? lane : ((lane << BigInt(by)) | (lane >> BigInt(64 - by))) & MASK;

function keccakF(state: bigint[]): void {
	for (const constant of ROUND_CONSTANTS) {
		const c = [0, 1, 2, 3, 4].map(
			(x) => state[x] ^ state[x + 5] ^ state[x + 10] ^ state[x + 15] ^ state[x + 20],
		);
		for (let x = 0; x < 5; x++) {
			const d = c[(x + 4) % 5] ^ rotate(c[(x + 1) % 5], 1);
			for (let y = 0; y < 5; y++) state[x + 5 * y] ^= d;
		}
		const b: bigint[] = new Array<bigint>(25).fill(0n);
		for (let x = 0; x < 5; x++)
			for (let y = 0; y < 5; y++)
				b[y + 5 * ((2 * x + 3 * y) % 5)] = rotate(state[x + 5 * y], ROTATIONS[x][y]);
		for (let x = 0; x < 5; x++)
			for (let y = 0; y < 5; y++)
				state[x + 5 * y] =
					b[x + 5 * y] ^ (~b[((x + 1) % 5) + 5 * y] & MASK & b[((x + 2) % 5) + 5 * y]);
		state[0] ^= constant;
	}
}

/** Keccak-256 (Ethereum's hash, not SHA3-256) of a short ASCII text (at most 135 bytes), in hex. */
export function keccak256Hex(text: string): string {
	const rate = 136;
	const block = new Uint8Array(rate);
	const data = Buffer.from(text, 'latin1');
	if (data.length >= rate) throw new Error('keccak256Hex takes at most 135 bytes');
	block.set(data);
	block[data.length] ^= 0x01;
	block[rate - 1] ^= 0x80;
	const state: bigint[] = new Array<bigint>(25).fill(0n);
	for (let lane = 0; lane < rate / 8; lane++) {
		let value = 0n;
		for (let i = 7; i >= 0; i--) value = (value << 8n) | BigInt(block[lane * 8 + i]);
		state[lane] = value;
	}
	keccakF(state);
	let hex = '';
	for (let lane = 0; lane < 4; lane++) {
		for (let i = 0; i < 8; i++) {
			hex += Number((state[lane] >> BigInt(8 * i)) & 0xffn)
				.toString(16)
				.padStart(2, '0');
		}
	}
	return hex;
}

/**
 * EIP-55: an Ethereum address in mixed case carries a checksum in its letters' case (a letter is
 * upper case where the Keccak-256 of the lower-case address has a nibble of 8 or more). An address
 * all in lower (or upper) case carries none.
 */
export function ethChecksumValid(address: string): boolean {
	const hex = address.slice(2);
	if (hex === hex.toLowerCase() || hex === hex.toUpperCase()) return true;
	const hash = keccak256Hex(hex.toLowerCase());
	return [...hex].every((char, i) => {
		if (!/[a-f]/i.test(char)) return true;
		const upper = parseInt(hash[i], 16) >= 8;
		return upper ? char === char.toUpperCase() : char === char.toLowerCase();
	});
}

/** Each network's addresses, in a sentence. */
const ADDRESSES_OF: Readonly<Record<PayoutNetwork, string>> = {
	TRX: 'a Tron (TRX) address',
	ETH: 'an Ethereum (ETH) address',
};

/** Network: TRX or ETH (any letter case); returns it upper case. */
export function checkNetwork(node: INode, value: unknown, itemIndex: number): PayoutNetwork {
	const text = typeof value === 'string' ? value.trim().toUpperCase() : '';
	if ((PAYOUT_NETWORKS as readonly string[]).includes(text)) return text as PayoutNetwork;
	throw inputError(
		node,
		'Network',
		`must be TRX (Tron) or ETH (Ethereum) (got ${JSON.stringify(value ?? '')})`,
		itemIndex,
		'Nothing was paid.',
	);
}

const TRON_SHAPE = /^T[1-9A-HJ-NP-Za-km-z]{33}$/;
const ETH_SHAPE = /^0x[0-9a-fA-F]{40}$/;

/**
 * Wallet Address: the shape of the network's addresses (Tron: base58, starting with T, 34
 * characters; Ethereum: 0x and 40 hex digits) and its checksum. Spaces around it are removed,
 * nothing else is changed. Returns the address.
 */
export function checkWalletAddress(
	node: INode,
	value: unknown,
	network: PayoutNetwork,
	itemIndex: number,
): string {
	const address = typeof value === 'string' ? value.trim() : '';
	if (address === '')
		throw inputError(node, 'Wallet Address', 'is required for crypto payouts', itemIndex);
	const got = `(got ${JSON.stringify(address)})`;
	const wrongNetwork = (other: PayoutNetwork) =>
		`It looks like ${ADDRESSES_OF[other]}: set Network to ${other} if that is the recipient's network. Nothing was paid.`;
	if (network === 'TRX') {
		if (!TRON_SHAPE.test(address)) {
			throw inputError(
				node,
				'Wallet Address',
				`is not a Tron (TRX) address: T and 33 more base58 characters (no 0, O, I or l), 34 in all ${got}`,
				itemIndex,
				ETH_SHAPE.test(address) ? wrongNetwork('ETH') : 'Nothing was paid.',
			);
		}
		if (!tronChecksumValid(address)) {
			throw inputError(
				node,
				'Wallet Address',
				`fails the Tron address checksum: a character is mistyped ${got}`,
				itemIndex,
				'Copy the address from the recipient again; never retype it. Nothing was paid.',
			);
		}
		return address;
	}
	if (!ETH_SHAPE.test(address)) {
		throw inputError(
			node,
			'Wallet Address',
			`is not an Ethereum (ETH) address: 0x and 40 hex digits ${got}`,
			itemIndex,
			TRON_SHAPE.test(address) ? wrongNetwork('TRX') : 'Nothing was paid.',
		);
	}
	if (!ethChecksumValid(address)) {
		throw inputError(
			node,
			'Wallet Address',
			`fails the Ethereum address checksum (EIP-55, the case of its letters): a character is mistyped ${got}`,
			itemIndex,
			'Copy the address from the recipient again; never retype it. Nothing was paid.',
		);
	}
	return address;
}

/** A Steam account name: 3 to 64 Latin letters, digits or underscores. */
const STEAM_LOGIN = /^[A-Za-z0-9_]{3,64}$/;

/** Steam Login: the Steam account name (not the profile name or its URL). Returns it trimmed. */
export function checkSteamLogin(node: INode, value: unknown, itemIndex: number): string {
	const login =
		typeof value === 'string' ? value.trim() : typeof value === 'number' ? String(value) : '';
	if (login === '')
		throw inputError(node, 'Steam Login', 'is required for Steam payouts', itemIndex);
	if (!STEAM_LOGIN.test(login)) {
		throw inputError(
			node,
			'Steam Login',
			`must be a Steam account name: 3 to 64 Latin letters, digits or underscores (got ${JSON.stringify(login)})`,
			itemIndex,
			"The account name is what the recipient signs in to Steam with, not the profile's display name or its link. Nothing was paid.",
		);
	}
	return login;
}
